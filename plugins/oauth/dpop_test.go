package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/plugins/oauth/discovery"
	"github.com/hermes-agent/hermes/plugins/oauth/tokenstore"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// decodedProof is a proof checked as a server checks it (RFC 9449 §4.3):
// its header, and its claims once the signature verifies with the jwk of
// its own header.
type decodedProof struct {
	typ, alg string
	thumb    string
	claims   map[string]any
}

func decodeProof(t *testing.T, proof string) decodedProof {
	t.Helper()
	d, err := parseProof(proof)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func parseProof(proof string) (decodedProof, error) {
	jws, err := jose.ParseSigned(proof, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || len(jws.Signatures) != 1 {
		return decodedProof{}, fmt.Errorf("the proof does not parse as an ES256 JWS: %v", err)
	}
	h := jws.Signatures[0].Protected
	if h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		return decodedProof{}, fmt.Errorf("the proof's header has no public jwk: %+v", h.JSONWebKey)
	}
	payload, err := jws.Verify(h.JSONWebKey)
	if err != nil {
		return decodedProof{}, fmt.Errorf("the proof does not verify with its own jwk: %v", err)
	}
	sum, err := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil {
		return decodedProof{}, err
	}
	d := decodedProof{alg: h.Algorithm, thumb: base64.RawURLEncoding.EncodeToString(sum)}
	d.typ, _ = h.ExtraHeaders[jose.HeaderType].(string)
	if err := json.Unmarshal(payload, &d.claims); err != nil {
		return decodedProof{}, err
	}
	return d, nil
}

func ath(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// A proof carries exactly what RFC 9449 §4.2 asks: typ dpop+jwt, ES256,
// the public key (never the private part), a fresh jti, htm, htu without
// query or fragment, iat now, and ath and nonce when given.
func TestProofContents(t *testing.T) {
	k, data, err := newDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	var priv struct{ D string }
	if json.Unmarshal(data, &priv) != nil || priv.D == "" {
		t.Fatal("the kept form holds no private key")
	}
	p1, err := k.proof("GET", "https://rs.example:8443/mcp/x?token=secret#frag", "the-access-token", "n-1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p1, priv.D) {
		t.Fatal("the proof holds the private key")
	}
	d := decodeProof(t, p1)
	if d.typ != "dpop+jwt" || d.alg != "ES256" || d.thumb != k.thumb {
		t.Fatalf("header: typ %q alg %q thumbprint %s, want the key's %s", d.typ, d.alg, d.thumb, k.thumb)
	}
	iat, _ := d.claims["iat"].(float64)
	if age := time.Since(time.Unix(int64(iat), 0)); age < -time.Second || age > 5*time.Second {
		t.Errorf("iat %v is not now", iat)
	}
	jti, _ := d.claims["jti"].(string)
	if len(jti) < 16 {
		t.Errorf("jti %q is too short to be random", jti)
	}
	want := map[string]any{"htm": "GET", "htu": "https://rs.example:8443/mcp/x", "ath": ath("the-access-token"), "nonce": "n-1"}
	for c, v := range want {
		if d.claims[c] != v {
			t.Errorf("claim %s = %v, want %v", c, d.claims[c], v)
		}
	}
	if len(d.claims) != len(want)+2 {
		t.Errorf("claims %v: want jti, iat and %d more", d.claims, len(want))
	}

	p2, err := k.proof("POST", "https://as.example/token", "", "")
	if err != nil {
		t.Fatal(err)
	}
	d2 := decodeProof(t, p2)
	if d2.claims["jti"] == jti || d2.claims["htm"] != "POST" || d2.claims["htu"] != "https://as.example/token" {
		t.Errorf("second proof: %v", d2.claims)
	}
	if _, ok := d2.claims["ath"]; ok {
		t.Error("a token request's proof has an ath")
	}
	if _, ok := d2.claims["nonce"]; ok {
		t.Error("a proof without a known nonce has one")
	}
	if _, err := k.proof("GET", "/relative", "", ""); err == nil {
		t.Error("a proof for a relative URL")
	}
}

// openDPoP opens the plugin for a server at rsURL, its files in dir,
// sealed with seal when it is not nil.
func openDPoP(t *testing.T, dir, rsURL string, seal []byte, settings map[string]any) *authenticator {
	t.Helper()
	cfg := auth.Config{Server: "notes", Method: "oauth", URL: rsURL, TokenDir: dir, Settings: settings}
	if seal != nil {
		cfg.Seal = &auth.Seal{Key: seal}
	}
	a, err := open(context.Background(), cfg, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The key is made once, kept 0600 and sealed like the token files, read
// back by another process, and goes with a logout: the next one differs.
func TestDPoPKeyKeptSealedAndRotated(t *testing.T) {
	dir := t.TempDir()
	seal := bytes.Repeat([]byte{7}, auth.SealKeySize)
	a := openDPoP(t, dir, "https://rs.example/mcp", seal, nil)
	k1, err := a.dpopKey()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := a.dpopKey(); again != k1 {
		t.Error("the key was not cached")
	}
	fi, err := os.Stat(a.store.DPoPKeyPath())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v", fi, err)
	}
	raw, _ := os.ReadFile(a.store.DPoPKeyPath())
	if bytes.Contains(raw, []byte(`"d"`)) || bytes.Contains(raw, []byte("P-256")) || !bytes.Contains(raw, []byte(`"sealed"`)) {
		t.Fatalf("the key file is not sealed:\n%s", raw)
	}
	other := openDPoP(t, dir, "https://rs.example/mcp", seal, nil)
	if k, err := other.dpopKey(); err != nil || k.thumb != k1.thumb {
		t.Fatalf("another process reads another key: %v", err)
	}
	if _, err := openDPoP(t, dir, "https://rs.example/mcp", bytes.Repeat([]byte{8}, auth.SealKeySize), nil).dpopKey(); sdk.ErrorCode(err) != sdk.CodeAuth {
		t.Fatalf("a key sealed with another folder key: %v", err)
	}
	if _, err := a.Logout(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.store.DPoPKeyPath()); !os.IsNotExist(err) {
		t.Fatalf("the key outlived the logout: %v", err)
	}
	k2, err := a.dpopKey()
	if err != nil || k2.thumb == k1.thumb {
		t.Fatalf("after the logout: %v, same key %v", err, k2 != nil && k2.thumb == k1.thumb)
	}
}

// The token endpoint that wants its nonce gets one retry with it; the
// DPoP token it then issues is kept as such, and the nonce of its answer
// is the next request's. One that refuses the nonce it gave gets no
// second retry.
func TestTokenRequestNonceRetry(t *testing.T) {
	var hits atomic.Int32
	var stubborn atomic.Bool
	var lastProof atomic.Value
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		proof := r.Header.Get("DPoP")
		if proof == "" { // a server that binds whatever it is sent
			_, _ = io.WriteString(w, `{"access_token":"at-0","token_type":"DPoP"}`)
			return
		}
		lastProof.Store(proof)
		d, err := parseProof(proof)
		if err != nil {
			t.Error(err)
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid_dpop_proof"}`)
			return
		}
		if d.claims["nonce"] != "as-n1" || stubborn.Load() {
			w.Header().Set("DPoP-Nonce", "as-n1")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"use_dpop_nonce","error_description":"nonce please"}`)
			return
		}
		w.Header().Set("DPoP-Nonce", "as-n2")
		_, _ = io.WriteString(w, `{"access_token":"at-1","token_type":"DPoP","expires_in":60}`)
	}))
	defer as.Close()
	a := openDPoP(t, t.TempDir(), "https://rs.example/mcp", nil, nil)
	k, err := a.dpopKey()
	if err != nil {
		t.Fatal(err)
	}
	p := &prover{a: a, key: k}
	ctx := context.Background()
	tok, err := tokenRequest(ctx, as.Client(), as.URL+"/token", client{ID: "c"}, url.Values{"grant_type": {"client_credentials"}}, p)
	if err != nil || tok.TokenType != "DPoP" || hits.Load() != 2 {
		t.Fatalf("token %+v, %v after %d requests", tok, err, hits.Load())
	}
	if n := a.nonceFor(as.URL + "/token"); n != "as-n2" {
		t.Fatalf("nonce for next time %q", n)
	}
	if d := decodeProof(t, lastProof.Load().(string)); d.claims["htu"] != as.URL+"/token" || d.claims["htm"] != "POST" || d.thumb != k.thumb {
		t.Fatalf("token request proof: %v", d.claims)
	}

	stubborn.Store(true)
	hits.Store(0)
	a.takeNonce(as.URL, "as-n1")
	_, err = tokenRequest(ctx, as.Client(), as.URL+"/token", client{ID: "c"}, url.Values{}, p)
	if oauthCode(err) != "use_dpop_nonce" || hits.Load() != 1 {
		t.Fatalf("a server refusing its own nonce: %v after %d requests", err, hits.Load())
	}
	// Without DPoP a DPoP token stays refused.
	stubborn.Store(false)
	if _, err := tokenRequest(ctx, as.Client(), as.URL+"/token", client{ID: "c"}, url.Values{}, nil); err == nil {
		t.Fatal("a request without a proof took a token")
	}
}

// oauth.dpop: auto binds the tokens when the authorization server offers
// ES256 and the resource asks (its challenge or its metadata); true needs
// the offer, else a config error naming the key; false never binds.
func TestUseDPoPDecision(t *testing.T) {
	es := []string{"RS256", "ES256"}
	cases := []struct {
		mode      any
		algs      []string
		challenge string
		required  bool
		want      bool
		err       bool
	}{
		{nil, es, `DPoP resource_metadata="u"`, false, true, false},
		{"auto", es, "", true, true, false},
		{"auto", es, `Bearer resource_metadata="u"`, false, false, false},
		{"auto", []string{"RS256"}, `DPoP algs="RS256"`, true, false, false},
		{"auto", nil, `DPoP`, true, false, false},
		{true, es, "", false, true, false},
		{"true", []string{"EdDSA"}, "", false, false, true},
		{false, es, `DPoP`, true, false, false},
		{"false", es, "", true, false, false},
	}
	for i, c := range cases {
		set := map[string]any{}
		if c.mode != nil {
			set["dpop"] = c.mode
		}
		a := openDPoP(t, t.TempDir(), "https://rs.example/mcp", nil, set)
		a.noteChallenge([]string{c.challenge})
		d := &discovered{meta: &discovery.ServerMetadata{Issuer: "https://as.example", DPoPSigningAlgValuesSupported: c.algs}, dpopRequired: c.required}
		got, err := a.useDPoP(d)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("case %d (%v): %v, %v", i, c.mode, got, err)
		}
		if err != nil && (sdk.ErrorCode(err) != sdk.CodeConfig || !strings.Contains(err.Error(), "oauth.dpop") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("case %d: the error does not name the key on one line: %v", i, err)
		}
	}
	if _, err := parseSettings(map[string]any{"dpop": "sometimes"}); sdk.ErrorCode(err) != sdk.CodeConfig || !strings.Contains(err.Error(), "oauth.dpop") {
		t.Errorf("a bad oauth.dpop: %v", err)
	}
}

// A DPoP-bound token goes out as Authorization: DPoP with a proof for
// that very request, valid for it alone; the resource's use_dpop_nonce
// challenge is answered with a retry whose proof carries the nonce, once
// per new nonce. A Bearer token is unchanged.
func TestResourceHeadersAndNonceChallenge(t *testing.T) {
	const rs = "https://rs.example/mcp"
	dir := t.TempDir()
	a := openDPoP(t, dir, rs, nil, nil)
	if err := a.store.Save(&tokenstore.Token{AccessToken: "bound-at", TokenType: "DPoP", ExpiresIn: 3600}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := a.Headers(ctx, auth.HeadersRequest{Method: "GET", URL: rs + "?session=1"})
	if err != nil || h.Headers["Authorization"] != "DPoP bound-at" || !h.ValidUntil.IsZero() {
		t.Fatalf("headers %+v, %v", h, err)
	}
	k, _ := a.dpopKey()
	d := decodeProof(t, h.Headers["DPoP"])
	if d.thumb != k.thumb || d.claims["htm"] != "GET" || d.claims["htu"] != rs || d.claims["ath"] != ath("bound-at") || d.claims["nonce"] != nil {
		t.Fatalf("resource proof: %v", d.claims)
	}

	c := auth.Challenge{Method: "POST", URL: rs, Status: 401, Attempt: 1, DPoPNonce: "rs-n1",
		WWWAuthenticate: []string{`DPoP error="use_dpop_nonce", error_description="nonce", resource_metadata="https://rs.example/.well-known/oauth-protected-resource/mcp"`}}
	ans, err := a.Challenge(ctx, c, auth.NoUI{})
	if err != nil || !ans.Retry || ans.Headers.Headers["Authorization"] != "DPoP bound-at" {
		t.Fatalf("answer %+v, %v", ans, err)
	}
	d = decodeProof(t, ans.Headers.Headers["DPoP"])
	if d.claims["nonce"] != "rs-n1" || d.claims["htm"] != "POST" {
		t.Fatalf("retry proof: %v", d.claims)
	}
	// The same nonce refused again is no reason to retry with it: the
	// token itself is the problem, and with no way to renew it, a login.
	c.Attempt = 2
	if _, err := a.Challenge(ctx, c, auth.NoUI{}); sdk.ErrorCode(err) != sdk.CodeLoginNeeded {
		t.Fatalf("the same nonce again: %v", err)
	}

	b := openDPoP(t, t.TempDir(), rs, nil, nil)
	if err := b.store.Save(&tokenstore.Token{AccessToken: "plain-at", TokenType: "Bearer", ExpiresIn: 3600}); err != nil {
		t.Fatal(err)
	}
	h, err = b.Headers(ctx, auth.HeadersRequest{Method: "POST", URL: rs})
	if err != nil || len(h.Headers) != 1 || h.Headers["Authorization"] != "Bearer plain-at" || h.ValidUntil.IsZero() {
		t.Fatalf("bearer headers %+v, %v", h, err)
	}
	if _, err := os.Stat(b.store.DPoPKeyPath()); !os.IsNotExist(err) {
		t.Fatalf("a Bearer token made a DPoP key: %v", err)
	}
}
