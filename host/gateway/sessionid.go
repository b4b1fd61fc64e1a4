package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A session id of the 2025-11-25 revision is self-contained: it carries
// when it was issued and a random part, and a MAC over those and the
// person it was issued to, keyed with the deployment's session key. Any
// replica with the key accepts it for the same person; no replica keeps
// it. Its text is sessionPrefix, then the base64url of issued (8 bytes,
// Unix seconds, big endian), nonce (12 bytes) and the first macBytes bytes
// of HMAC-SHA256(key, "hermes-gateway-session" | issued | nonce | subject).
const (
	sessionPrefix  = "hg1."
	sessionNonce   = 12
	sessionMACSize = 16
	sessionRawSize = 8 + sessionNonce + sessionMACSize
	// MaxSessionIDBytes bounds the Mcp-Session-Id header a client sends.
	MaxSessionIDBytes = 128
	// MinSessionKeyBytes is the least key length accepted.
	MinSessionKeyBytes = 32
)

// errSessionID is every refusal of a session id: the client starts a new
// session (the revision says a 404 asks for that).
var errSessionID = errors.New("unknown session id")

// SessionIDs issues and checks the session ids of one deployment.
type SessionIDs struct {
	key    []byte
	maxAge time.Duration
	now    func() time.Time
}

// NewSessionIDs returns the session ids of a deployment whose key is key
// (at least MinSessionKeyBytes); an id older than maxAge is refused (0:
// never).
func NewSessionIDs(key []byte, maxAge time.Duration) (*SessionIDs, error) {
	if len(key) < MinSessionKeyBytes {
		return nil, fmt.Errorf("the session key has %d bytes; it needs at least %d (e.g. `openssl rand -base64 48`)", len(key), MinSessionKeyBytes)
	}
	return &SessionIDs{key: append([]byte(nil), key...), maxAge: maxAge, now: time.Now}, nil
}

// Issue returns a new session id for subject.
func (s *SessionIDs) Issue(subject string) string {
	var raw [sessionRawSize]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(s.now().Unix()))
	_, _ = rand.Read(raw[8 : 8+sessionNonce])
	copy(raw[8+sessionNonce:], s.mac(raw[:8+sessionNonce], subject))
	return sessionPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
}

// Check reports whether id was issued by this deployment to subject and
// is not older than the maximum age.
func (s *SessionIDs) Check(id, subject string) error {
	if len(id) > MaxSessionIDBytes || !strings.HasPrefix(id, sessionPrefix) {
		return errSessionID
	}
	raw, err := base64.RawURLEncoding.DecodeString(id[len(sessionPrefix):])
	if err != nil || len(raw) != sessionRawSize {
		return errSessionID
	}
	if !hmac.Equal(raw[8+sessionNonce:], s.mac(raw[:8+sessionNonce], subject)) {
		return errSessionID
	}
	issued := time.Unix(int64(binary.BigEndian.Uint64(raw[:8])), 0)
	if s.maxAge > 0 && s.now().Sub(issued) > s.maxAge {
		return errSessionID
	}
	return nil
}

func (s *SessionIDs) mac(head []byte, subject string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("hermes-gateway-session"))
	m.Write(head)
	m.Write([]byte(subject))
	return m.Sum(nil)[:sessionMACSize]
}
