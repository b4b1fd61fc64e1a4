// Package vault owns what `hermes mcp gateway` keeps of each person's
// upstream credentials: the deployment's vault key (read from the
// variable gateway.vault_key_env names), the folder of each person under
// the gateway's home (named by a keyed hash of their subject, so the
// folder names tell nobody who has logged in), the key of each person's
// folder (derived from the vault key: a person's auth plugin holds the key
// of their folder only, and a file moved to another person's folder does
// not open), the check that the key is the one the vault was sealed with,
// and the links and states that bind a login to a person and a server
// (sealed, authenticated and expiring, so any replica with the key can
// check them and nobody can read or forge them).
//
// It never sees a token: the auth plugins (hermes-auth-oauth) read and
// write the files, sealed with the key this package gives them. It never
// logs or prints a key.
package vault

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/sdk/auth"
)

// KeySize is the size of the vault key.
const KeySize = 32

// DirName is the vault's folder under the gateway's home.
const DirName = "gateway-vault"

// checkFile is the file under the vault's folder that tells whether a key
// is the vault's: a known text sealed with the key.
const checkFile = "vault.check"

// checkText is what checkFile holds, sealed.
const checkText = "hermes gateway vault v1"

// ErrWrongKey: the key does not open the vault (its files were sealed with
// another key). Nothing was changed.
var ErrWrongKey = errors.New("it is not the key this vault's files were sealed with")

// KeyFrom reads the vault key from variable name: 32 bytes as base64
// (standard or URL alphabet, padded or not) or hex. Its errors are one
// line naming the variable, never its value.
func KeyFrom(name string, lookup func(string) (string, bool)) ([]byte, error) {
	v, ok := lookup(name)
	v = strings.TrimSpace(v)
	if !ok || v == "" {
		return nil, fmt.Errorf("$%s is not set: the gateway seals each person's upstream OAuth tokens with it; set it from the deployment's secret to 32 random bytes (`openssl rand -base64 32`), the same on every replica (gateway.vault_key_env names another variable)", name)
	}
	if b, err := hex.DecodeString(v); err == nil && len(b) == KeySize {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(v); err == nil {
			if len(b) != KeySize {
				return nil, fmt.Errorf("$%s holds %d bytes, want %d: set it to `openssl rand -base64 32`", name, len(b), KeySize)
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("$%s is neither base64 nor hex of %d bytes: set it to `openssl rand -base64 32`", name, KeySize)
}

// Vault is the folder of every person's upstream credentials, and the key
// they are sealed with.
type Vault struct {
	dir string
	// names keys the hash of a subject into a folder name; people derives
	// each person's folder key; links seals login links and states.
	names, people []byte
	links         cipher.AEAD
}

// Open opens the vault in dir with key, creating the folder (0700) and
// its check file the first time. A key that does not open the check file
// is ErrWrongKey, and nothing is changed.
func Open(dir string, key []byte) (*Vault, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("the vault key has %d bytes, want %d", len(key), KeySize)
	}
	derive := func(info string) []byte {
		k, err := hkdf.Key(sha256.New, key, nil, "hermes gateway vault "+info, KeySize)
		if err != nil {
			panic(err) // only a length over 255*32 fails
		}
		return k
	}
	v := &Vault{dir: filepath.Clean(dir), names: derive("folder names"), people: derive("people")}
	var err error
	if v.links, err = newAEAD(derive("links")); err != nil {
		return nil, err
	}
	check, err := newAEAD(derive("check"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(v.dir, 0o700); err != nil {
		return nil, fmt.Errorf("vault folder %s: %w", v.dir, err)
	}
	path := filepath.Join(v.dir, checkFile)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		sealed := sealWith(check, []byte(checkText), checkFile)
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(sealed+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("vault check file %s: %w", path, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return nil, fmt.Errorf("vault check file %s: %w", path, err)
		}
	case err != nil:
		return nil, fmt.Errorf("vault check file %s: %w", path, err)
	default:
		plain, err := openWith(check, strings.TrimSpace(string(data)), checkFile)
		if err != nil || string(plain) != checkText {
			return nil, ErrWrongKey
		}
	}
	return v, nil
}

// Dir is the vault's folder.
func (v *Vault) Dir() string { return v.dir }

// PersonDir is the token folder of subject: a folder of the vault named
// by a keyed hash of the subject.
func (v *Vault) PersonDir(subject string) string {
	m := hmac.New(sha256.New, v.names)
	m.Write([]byte(subject))
	return filepath.Join(v.dir, "people", hex.EncodeToString(m.Sum(nil)[:16]))
}

// Seal is the seal of subject's folder: a key of their own, derived from
// the vault key.
func (v *Vault) Seal(subject string) *auth.Seal {
	k, err := hkdf.Key(sha256.New, v.people, nil, "person\x00"+subject, auth.SealKeySize)
	if err != nil {
		panic(err)
	}
	return &auth.Seal{Key: k}
}

// HasToken reports whether subject's folder holds a token file of server
// (auth.FileStem's name): whether they have logged in to it. It opens
// nothing.
func (v *Vault) HasToken(subject, server string) bool {
	fi, err := os.Lstat(filepath.Join(v.PersonDir(subject), auth.FileStem(server)+".json"))
	return err == nil && fi.Mode().IsRegular()
}

// RemovePerson deletes subject's folder with everything in it, and
// reports whether there was one.
func (v *Vault) RemovePerson(subject string) (bool, error) {
	dir := v.PersonDir(subject)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, fmt.Errorf("remove %s: %w", dir, err)
	}
	return true, nil
}

// Purposes of a Binding: what it lets its bearer do.
const (
	// PurposeStart is a login link: GET it to be sent to the server's
	// authorization server.
	PurposeStart = "start"
	// PurposeState is the state of the login that link started: it comes
	// back with the authorization server's redirect.
	PurposeState = "state"
)

// Binding is what a link or state carries: for whom and which server a
// login is, until when.
type Binding struct {
	Purpose string `json:"p"`
	Subject string `json:"s"`
	Server  string `json:"v"`
	Expires int64  `json:"e"`
	// Nonce makes each state its own (the PKCE verifier is derived from
	// it).
	Nonce string `json:"n,omitempty"`
}

// Bind seals b: the result is URL-safe, readable and checkable only with
// the vault key, and names nothing in the clear.
func (v *Vault) Bind(purpose, subject, server string, ttl time.Duration, now time.Time) string {
	b := Binding{Purpose: purpose, Subject: subject, Server: server, Expires: now.Add(ttl).Unix()}
	if purpose == PurposeState {
		n := make([]byte, 16)
		_, _ = rand.Read(n)
		b.Nonce = base64.RawURLEncoding.EncodeToString(n)
	}
	raw, _ := json.Marshal(b)
	return sealWith(v.links, raw, purpose)
}

// ErrBinding: a link or state that is not one of this vault's for that
// purpose, or has expired.
var ErrBinding = errors.New("not a valid login link of this gateway (forged, altered, for another step, or from a gateway with another vault key)")

// ErrExpired: a link or state whose time is up.
var ErrExpired = errors.New("the login link has expired; call the tool again for a new one")

// maxBinding bounds the text Check reads.
const maxBinding = 2048

// Check opens a link or state of purpose made by Bind, at now.
func (v *Vault) Check(purpose, s string, now time.Time) (Binding, error) {
	if len(s) > maxBinding {
		return Binding{}, ErrBinding
	}
	raw, err := openWith(v.links, s, purpose)
	if err != nil {
		return Binding{}, ErrBinding
	}
	var b Binding
	if json.Unmarshal(raw, &b) != nil || b.Purpose != purpose || b.Subject == "" || b.Server == "" {
		return Binding{}, ErrBinding
	}
	if now.Unix() >= b.Expires {
		return Binding{}, ErrExpired
	}
	return b, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// sealWith seals plain under aead with ad as associated data: base64url
// of nonce and ciphertext.
func sealWith(aead cipher.AEAD, plain []byte, ad string) string {
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(ad)))
}

// openWith opens what sealWith made.
func openWith(aead cipher.AEAD, s, ad string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < aead.NonceSize()+aead.Overhead() {
		return nil, ErrBinding
	}
	return aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], []byte(ad))
}
