package identity

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// The resource URI the tests' gateway serves.
const resource = "https://mcp.example.com/mcp"

// clock is a settable clock: the tests move time instead of waiting.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Unix(1_900_000_000, 0)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// signingKey is one of a test IdP's private keys.
type signingKey struct {
	kid string
	alg jose.SignatureAlgorithm
	key crypto.Signer
}

func rsaKey(t testing.TB, kid string) signingKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, alg: jose.RS256, key: k}
}

func ecKey(t testing.TB, kid string) signingKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, alg: jose.ES256, key: k}
}

func edKey(t testing.TB, kid string) signingKey {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, alg: jose.EdDSA, key: k}
}

// public is the key as a JWKS publishes it.
func (k signingKey) public() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.key.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"}
}

// sign returns a compact JWS of claims, signed with k under its kid.
func (k signingKey) sign(t testing.TB, claims map[string]any) string {
	opts := (&jose.SignerOptions{}).WithType("at+jwt")
	if k.kid != "" {
		opts = opts.WithHeader(jose.HeaderKey("kid"), k.kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// testIdP is an OAuth authorization server on loopback: discovery (OIDC
// and RFC 8414), a JWKS it can rotate, and an introspection endpoint.
type testIdP struct {
	srv    *httptest.Server
	issuer string

	mu        sync.Mutex
	keys      []jose.JSONWebKey
	active    map[string]map[string]any // opaque token → introspection answer
	jwksBody  []byte                    // served instead of keys when set
	noOIDC    bool                      // only RFC 8414 metadata
	metaIss   string                    // the issuer the metadata names, when set
	hangJWKS  bool
	jwksHook  func() // called as the JWKS is requested, when set
	clientID  string
	clientSec string

	discoveries, jwksFetches, introspections atomic.Int32
}

func newIdP(t testing.TB) *testIdP {
	p := &testIdP{active: map[string]map[string]any{}, clientID: "gateway", clientSec: "s3cret:&="}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		noOIDC, metaIss := p.noOIDC, p.metaIss
		p.mu.Unlock()
		oidc := r.URL.Path == "/realms/team/.well-known/openid-configuration"
		rfc8414 := r.URL.Path == "/.well-known/oauth-authorization-server/realms/team"
		if !(oidc && !noOIDC) && !rfc8414 {
			http.NotFound(w, r)
			return
		}
		p.discoveries.Add(1)
		if metaIss == "" {
			metaIss = p.issuer
		}
		writeJSON(w, map[string]any{
			"issuer":                 metaIss,
			"jwks_uri":               p.srv.URL + "/realms/team/certs",
			"introspection_endpoint": p.srv.URL + "/realms/team/introspect",
		})
	})
	mux.HandleFunc("/realms/team/certs", func(w http.ResponseWriter, r *http.Request) {
		p.jwksFetches.Add(1)
		p.mu.Lock()
		body, keys, hang, hook := p.jwksBody, p.keys, p.hangJWKS, p.jwksHook
		p.mu.Unlock()
		if hook != nil {
			hook()
		}
		if hang {
			<-r.Context().Done()
			return
		}
		if body != nil {
			_, _ = w.Write(body)
			return
		}
		writeJSON(w, jose.JSONWebKeySet{Keys: keys})
	})
	mux.HandleFunc("/realms/team/introspect", func(w http.ResponseWriter, r *http.Request) {
		p.introspections.Add(1)
		id, secret, ok := r.BasicAuth()
		if !ok || id != p.clientID || secret != "s3cret%3A%26%3D" {
			http.Error(w, "bad client", http.StatusUnauthorized)
			return
		}
		if r.FormValue("token_type_hint") != "access_token" {
			http.Error(w, "no hint", http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		answer, ok := p.active[r.FormValue("token")]
		p.mu.Unlock()
		if !ok {
			writeJSON(w, map[string]any{"active": false})
			return
		}
		writeJSON(w, answer)
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	p.issuer = p.srv.URL + "/realms/team"
	return p
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// publish replaces the IdP's published keys.
func (p *testIdP) publish(keys ...signingKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = nil
	for _, k := range keys {
		p.keys = append(p.keys, k.public())
	}
}

func (p *testIdP) set(f func(p *testIdP)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

// claims are a valid access token's claims at now, for the IdP, changed
// by the pairs of over (a nil value removes the claim).
func (p *testIdP) claims(now time.Time, over ...any) map[string]any {
	c := map[string]any{
		"iss":       p.issuer,
		"sub":       "alice",
		"aud":       []string{resource, "account"},
		"exp":       now.Add(5 * time.Minute).Unix(),
		"iat":       now.Unix(),
		"nbf":       now.Unix(),
		"scope":     "tools.read tools.call",
		"groups":    []string{"dev", "ops"},
		"client_id": "vscode",
		"jti":       "id-1",
	}
	for i := 0; i+1 < len(over); i += 2 {
		k := over[i].(string)
		if over[i+1] == nil {
			delete(c, k)
		} else {
			c[k] = over[i+1]
		}
	}
	return c
}

// issuerConfig is the gateway's configuration of the IdP.
func (p *testIdP) issuerConfig() IssuerConfig {
	return IssuerConfig{Issuer: p.issuer, GroupsClaim: "groups"}
}

// unsigned returns a JWT with alg "none" and no signature over claims.
func unsigned(claims map[string]any, kid string) string {
	head, _ := json.Marshal(map[string]any{"alg": "none", "typ": "JWT", "kid": kid})
	body, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding.EncodeToString
	return enc(head) + "." + enc(body) + "."
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// bearer returns a request carrying tok as its bearer token.
func bearer(tok string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "https://mcp.example.com/mcp", strings.NewReader("{}"))
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}
