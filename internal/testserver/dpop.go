package testserver

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// dpopAlgs are the proof algorithms --oauth-dpop takes.
var dpopAlgs = []string{string(jose.ES256), string(jose.RS256), string(jose.PS256), string(jose.EdDSA)}

// dpopWindow is how far a proof's iat may be from the server's clock, and
// how long a proof's jti is remembered against replay.
const dpopWindow = time.Minute

// dpopChecker checks the DPoP proofs of --oauth-dpop (RFC 9449 §4.3, §7):
// one proof per request, typ dpop+jwt, signed by the public key in its own
// header, that key the one the token is bound to (cnf.jkt), htm and htu
// this request's, ath the token's hash, iat within dpopWindow, a jti not
// seen before, and with --oauth-dpop-nonce the server's nonce.
type dpopChecker struct {
	nonce string // "" when no nonce is wanted

	mu   sync.Mutex
	seen map[string]time.Time // jti → when it was seen
}

func newDPoPChecker(wantNonce bool) *dpopChecker {
	c := &dpopChecker{seen: map[string]time.Time{}}
	if wantNonce {
		var b [16]byte
		_, _ = rand.Read(b[:])
		c.nonce = base64.RawURLEncoding.EncodeToString(b[:])
	}
	return c
}

// check checks r's proof for token, bound to jkt, at htu. When the proof
// lacks the server's nonce (or has another), the error comes with the
// nonce to send (use_dpop_nonce).
func (c *dpopChecker) check(r *http.Request, htu, token, jkt string) (nonce string, err error) {
	if jkt == "" {
		return "", errors.New("the token is not DPoP-bound (no cnf.jkt)")
	}
	proofs := r.Header.Values("DPoP")
	if len(proofs) != 1 {
		return "", fmt.Errorf("want one DPoP proof, got %d", len(proofs))
	}
	jws, err := jose.ParseSigned(proofs[0], []jose.SignatureAlgorithm{jose.ES256, jose.RS256, jose.PS256, jose.EdDSA})
	if err != nil || len(jws.Signatures) != 1 {
		return "", errors.New("the DPoP proof is not a signed JWT")
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "dpop+jwt" {
		return "", fmt.Errorf("the proof's typ is %q, not dpop+jwt", typ)
	}
	if h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() || !h.JSONWebKey.Valid() {
		return "", errors.New("the proof carries no public jwk")
	}
	payload, err := jws.Verify(h.JSONWebKey)
	if err != nil {
		return "", errors.New("the proof's signature does not verify with its jwk")
	}
	sum, err := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil || base64.RawURLEncoding.EncodeToString(sum) != jkt {
		return "", errors.New("the proof's key is not the one the token is bound to (cnf.jkt)")
	}
	var claims struct {
		JTI   string   `json:"jti"`
		HTM   string   `json:"htm"`
		HTU   string   `json:"htu"`
		IAT   *float64 `json:"iat"`
		ATH   string   `json:"ath"`
		Nonce string   `json:"nonce"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", errors.New("the proof's claims are not JSON")
	}
	ath := sha256.Sum256([]byte(token))
	now := time.Now()
	switch {
	case claims.JTI == "":
		return "", errors.New("the proof has no jti")
	case claims.HTM != r.Method:
		return "", fmt.Errorf("the proof's htm %q is not %s", claims.HTM, r.Method)
	case !sameHTU(claims.HTU, htu):
		return "", fmt.Errorf("the proof's htu %q is not %s", claims.HTU, htu)
	case claims.IAT == nil:
		return "", errors.New("the proof has no iat")
	case time.Unix(int64(*claims.IAT), 0).Sub(now).Abs() > dpopWindow:
		return "", errors.New("the proof's iat is out of the window")
	case claims.ATH != base64.RawURLEncoding.EncodeToString(ath[:]):
		return "", errors.New("the proof's ath is not the token's hash")
	}
	if c.nonce != "" && claims.Nonce != c.nonce {
		return c.nonce, errors.New("the proof lacks the server's nonce")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for jti, at := range c.seen {
		if now.Sub(at) > 2*dpopWindow {
			delete(c.seen, jti)
		}
	}
	if _, replay := c.seen[claims.JTI]; replay {
		return "", errors.New("the proof's jti was seen before (a replayed proof)")
	}
	c.seen[claims.JTI] = now
	return "", nil
}

// sameHTU compares a proof's htu with the request URL, without query and
// fragment (RFC 9449 §4.3: syntax-based normalization).
func sameHTU(got, want string) bool {
	g, err1 := url.Parse(got)
	w, err2 := url.Parse(want)
	if err1 != nil || err2 != nil || g.RawQuery != "" || g.Fragment != "" {
		return false
	}
	return g.Scheme == w.Scheme && g.Host == w.Host && g.EscapedPath() == w.EscapedPath()
}
