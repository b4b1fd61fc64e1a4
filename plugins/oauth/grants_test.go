package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// writeKey writes key as PEM of the given block type to a file of mode
// perm and returns its path.
func writeKey(t *testing.T, key crypto.Signer, blockType string, perm os.FileMode) string {
	t.Helper()
	var der []byte
	var err error
	switch blockType {
	case "PRIVATE KEY":
		der, err = x509.MarshalPKCS8PrivateKey(key)
	case "EC PRIVATE KEY":
		der, err = x509.MarshalECPrivateKey(key.(*ecdsa.PrivateKey))
	case "RSA PRIVATE KEY":
		der = x509.MarshalPKCS1PrivateKey(key.(*rsa.PrivateKey))
	}
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "client-key.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
	return p
}

func ecKey(t *testing.T, c elliptic.Curve) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// verifyAssertion checks a JWT's signature with pub and returns its
// header and claims.
func verifyAssertion(t *testing.T, token string, pub any, algs ...jose.SignatureAlgorithm) (jose.Header, jwt.Claims) {
	t.Helper()
	parsed, err := jwt.ParseSigned(token, algs)
	if err != nil {
		t.Fatalf("the assertion does not parse: %v", err)
	}
	var c jwt.Claims
	if err := parsed.Claims(pub, &c); err != nil {
		t.Fatalf("the assertion's signature does not verify: %v", err)
	}
	return parsed.Headers[0], c
}

func TestClientAssertionClaims(t *testing.T) {
	key := ecKey(t, elliptic.P256())
	k, err := loadSigningKey(writeKey(t, key, "PRIVATE KEY", 0o600), "", "key-7")
	if err != nil {
		t.Fatal(err)
	}
	if k.alg != jose.ES256 {
		t.Fatalf("a P-256 key signs with %s, want ES256", k.alg)
	}
	before := time.Now().Add(-time.Second)
	first, err := k.clientAssertion("client-1", "https://as.example")
	if err != nil {
		t.Fatal(err)
	}
	second, err := k.clientAssertion("client-1", "https://as.example")
	if err != nil {
		t.Fatal(err)
	}
	h, c := verifyAssertion(t, first, &key.PublicKey, jose.ES256)
	if h.KeyID != "key-7" || h.Algorithm != "ES256" || h.ExtraHeaders["typ"] != "JWT" {
		t.Errorf("header = kid %q alg %q typ %v; want key-7, ES256, JWT", h.KeyID, h.Algorithm, h.ExtraHeaders["typ"])
	}
	if c.Issuer != "client-1" || c.Subject != "client-1" {
		t.Errorf("iss %q sub %q, want the client_id for both", c.Issuer, c.Subject)
	}
	if len(c.Audience) != 1 || c.Audience[0] != "https://as.example" {
		t.Errorf("aud = %v, want the issuer alone", c.Audience)
	}
	if c.ID == "" || c.IssuedAt == nil || c.Expiry == nil {
		t.Fatalf("jti, iat or exp missing: %+v", c)
	}
	iat, exp := c.IssuedAt.Time(), c.Expiry.Time()
	if iat.Before(before.Truncate(time.Second)) || exp.Sub(iat) <= 0 || exp.Sub(iat) > 5*time.Minute {
		t.Errorf("iat %v exp %v: want issued now, valid at most 5 minutes", iat, exp)
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: "client-1", AnyAudience: jwt.Audience{"https://as.example"}, Time: time.Now()}, 0); err != nil {
		t.Errorf("the assertion is not valid now: %v", err)
	}
	_, c2 := verifyAssertion(t, second, &key.PublicKey, jose.ES256)
	if c2.ID == c.ID {
		t.Error("two assertions share a jti")
	}
}

func TestSigningKeyFormats(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		key       crypto.Signer
		blockType string
		alg       string
		want      jose.SignatureAlgorithm
	}{
		{"rsa pkcs1", rsaKey, "RSA PRIVATE KEY", "", jose.RS256},
		{"rsa pkcs8 PS256", rsaKey, "PRIVATE KEY", "PS256", jose.PS256},
		{"ec sec1 p-384", ecKey(t, elliptic.P384()), "EC PRIVATE KEY", "", jose.ES384},
		{"ed25519", edKey, "PRIVATE KEY", "", jose.EdDSA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := loadSigningKey(writeKey(t, tc.key, tc.blockType, 0o600), tc.alg, "")
			if err != nil {
				t.Fatal(err)
			}
			if k.alg != tc.want {
				t.Fatalf("alg %s, want %s", k.alg, tc.want)
			}
			a, err := k.clientAssertion("c", "https://as.example")
			if err != nil {
				t.Fatal(err)
			}
			verifyAssertion(t, a, tc.key.Public(), tc.want)
		})
	}
}

func TestSigningKeyErrors(t *testing.T) {
	key := ecKey(t, elliptic.P256())
	loose := writeKey(t, key, "PRIVATE KEY", 0o644)
	if _, err := loadSigningKey(loose, "", ""); err == nil || !strings.Contains(err.Error(), "chmod 600") || !strings.Contains(err.Error(), "oauth.private_key_file") {
		t.Errorf("a key readable by others: %v, want an error naming the key and chmod 600", err)
	}
	if _, err := loadSigningKey(writeKey(t, key, "PRIVATE KEY", 0o600), "RS256", ""); err == nil || !strings.Contains(err.Error(), "oauth.signing_alg RS256 does not fit") {
		t.Errorf("RS256 with an EC key: %v", err)
	}
	notPEM := filepath.Join(t.TempDir(), "k.pem")
	if err := os.WriteFile(notPEM, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadSigningKey(notPEM, "", ""); err == nil || !strings.Contains(err.Error(), "no PEM private key") {
		t.Errorf("a file without a key: %v", err)
	}
	if _, err := loadSigningKey(filepath.Join(t.TempDir(), "absent.pem"), "", ""); err == nil || !strings.Contains(err.Error(), "oauth.private_key_file") {
		t.Errorf("a missing file: %v", err)
	}
}

func TestGrantSettingsErrors(t *testing.T) {
	for _, tc := range []struct {
		m    map[string]any
		want string
	}{
		{map[string]any{"grant_type": "password"}, "want authorization_code, client_credentials, jwt_bearer or id_jag"},
		{map[string]any{"grant_type": "client_credentials", "client_id": "c"}, "needs oauth.client_id and oauth.client_secret or oauth.private_key_file"},
		{map[string]any{"grant_type": "jwt_bearer", "client_id": "c"}, "jwt_bearer needs oauth.client_id and oauth.assertion_file or oauth.assertion_command"},
		{map[string]any{"grant_type": "id_jag", "client_id": "c", "assertion_file": "/t"}, "id_jag needs oauth.client_id, oauth.idp_token_endpoint"},
		{map[string]any{"grant_type": "jwt_bearer", "client_id": "c", "assertion_file": "/t", "assertion_command": []any{"x"}}, "both set"},
		{map[string]any{"grant_type": "jwt_bearer", "client_id": "c", "assertion_command": "gcloud auth print-identity-token"}, "oauth.assertion_command: want a command and its arguments"},
		{map[string]any{"assertion_file": "/t"}, "apply to grant_type jwt_bearer or id_jag, not authorization_code"},
		{map[string]any{"grant_type": "jwt_bearer", "client_id": "c", "assertion_file": "/t", "idp_token_endpoint": "https://idp"}, "apply to grant_type id_jag"},
		{map[string]any{"signing_alg": "ES256"}, "need oauth.private_key_file"},
		{map[string]any{"grant_type": "id_jag", "client_id": "c", "assertion_file": "/t", "idp_token_endpoint": "ftp://idp"}, "oauth.idp_token_endpoint: want an http(s) URL"},
	} {
		_, err := parseSettings(tc.m)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.m, err, tc.want)
		}
	}
	s, err := parseSettings(map[string]any{"grant_type": "id_jag", "client_id": "c", "assertion_file": "/t", "idp_token_endpoint": "https://idp/token"})
	if err != nil || s.IdPClientID != "c" {
		t.Errorf("id_jag without idp_client_id: %v, idp client %q; want client_id's", err, s.IdPClientID)
	}
	if _, err := parseSettings(map[string]any{"grant_type": "client_credentials", "client_id": "c", "private_key_file": "/k.pem"}); err != nil {
		t.Errorf("client_credentials with a private key: %v", err)
	}
}

func TestAssertionCommandBounds(t *testing.T) {
	ctx := context.Background()
	ok := assertionSource{Command: []string{"printf", "  eyJ.a.b \n"}}
	if a, err := ok.read(ctx); err != nil || a != "eyJ.a.b" {
		t.Errorf("printf: %q, %v; want the JWT trimmed", a, err)
	}
	hang := assertionSource{Command: []string{"sleep", "60"}, timeout: 200 * time.Millisecond}
	if _, err := hang.read(ctx); err == nil || !strings.Contains(err.Error(), "did not finish within 200ms") {
		t.Errorf("a command that hangs: %v, want it cut naming the time limit", err)
	}
	loud := assertionSource{Command: []string{"yes"}}
	_, err := loud.read(ctx)
	if err == nil || !strings.Contains(err.Error(), "printed over the 64 KiB limit") {
		t.Errorf("a command that prints too much: %v, want it cut naming the output limit", err)
	}
	if err != nil && strings.Contains(err.Error(), "\n") {
		t.Errorf("the error is not one line: %q", err)
	}
	failing := assertionSource{Command: []string{"sh", "-c", "echo first >&2; echo 'not logged in' >&2; exit 3"}}
	if _, err := failing.read(ctx); err == nil || !strings.Contains(err.Error(), "exit status 3: not logged in") {
		t.Errorf("a failing command: %v, want its status and last error line", err)
	}
	empty := assertionSource{Command: []string{"true"}}
	if _, err := empty.read(ctx); err == nil || !strings.Contains(err.Error(), "empty assertion") {
		t.Errorf("no output: %v", err)
	}
	big := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(big, bytes.Repeat([]byte("a"), maxAssertion+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (assertionSource{File: big}).read(ctx); err == nil || !strings.Contains(err.Error(), "over the 64 KiB limit") {
		t.Errorf("a file too big: %v", err)
	}
}

// loopbackAS is an authorization server (and an enterprise IdP) on
// loopback that verifies what it is sent with go-jose: client assertions
// against the client's public key, workload JWTs against the platform's,
// ID tokens against the IdP's; and an MCP server whose metadata names it.
type loopbackAS struct {
	t                  *testing.T
	as, idp, mcp       *httptest.Server
	clientKey          *ecdsa.PrivateKey // private_key_jwt
	platformKey        *ecdsa.PrivateKey // signs workload JWTs and ID tokens
	jagKey             *ecdsa.PrivateKey // the IdP's ID-JAG key
	authMethods        []string
	mu                 sync.Mutex
	grants, assertions []string // grant types and assertions the token endpoint saw
	exchanges          int
	refuse             string // an assertion the AS refuses with invalid_grant
	tokens             int
}

func newLoopbackAS(t *testing.T, authMethods ...string) *loopbackAS {
	l := &loopbackAS{t: t, clientKey: ecKey(t, elliptic.P256()), platformKey: ecKey(t, elliptic.P256()), jagKey: ecKey(t, elliptic.P256()), authMethods: authMethods}
	l.as = httptest.NewServer(http.HandlerFunc(l.serveAS))
	t.Cleanup(l.as.Close)
	l.idp = httptest.NewServer(http.HandlerFunc(l.serveIdP))
	t.Cleanup(l.idp.Close)
	l.mcp = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			writeJSON(w, 200, map[string]any{"resource": l.mcp.URL + "/mcp", "authorization_servers": []string{l.as.URL}})
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(l.mcp.Close)
	return l
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sign makes a JWT signed by key with claims.
func sign(t *testing.T, key *ecdsa.PrivateKey, typ string, claims any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType(jose.ContentType(typ)))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (l *loopbackAS) workloadJWT(sub string) string {
	now := time.Now()
	return sign(l.t, l.platformKey, "JWT", jwt.Claims{Issuer: "https://platform.example", Subject: sub, Audience: jwt.Audience{l.as.URL},
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(time.Hour))})
}

func (l *loopbackAS) serveAS(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		writeJSON(w, 200, map[string]any{"issuer": l.as.URL, "token_endpoint": l.as.URL + "/token", "authorization_endpoint": l.as.URL + "/authorize",
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": l.authMethods,
			"token_endpoint_auth_signing_alg_values_supported": []string{"ES256"},
			"grant_types_supported":                            []string{"client_credentials", jwtBearerGrantType}})
	case "/token":
		l.token(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (l *loopbackAS) fail(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func (l *loopbackAS) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		l.fail(w, 400, "invalid_request", err.Error())
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	grant := r.PostForm.Get("grant_type")
	l.grants = append(l.grants, grant)
	// The client: a private_key_jwt assertion, or Basic.
	if ca := r.PostForm.Get("client_assertion"); ca != "" {
		if r.PostForm.Get("client_assertion_type") != clientAssertionType {
			l.fail(w, 401, "invalid_client", "client_assertion_type")
			return
		}
		parsed, err := jwt.ParseSigned(ca, []jose.SignatureAlgorithm{jose.ES256})
		var c jwt.Claims
		if err == nil {
			err = parsed.Claims(&l.clientKey.PublicKey, &c)
		}
		if err == nil {
			err = c.Validate(jwt.Expected{Issuer: "the-client", Subject: "the-client", AnyAudience: jwt.Audience{l.as.URL}, Time: time.Now()})
		}
		if err != nil {
			l.fail(w, 401, "invalid_client", "client assertion: "+err.Error())
			return
		}
	} else if id, secret, ok := r.BasicAuth(); !ok || id != "the-client" || secret != "client-secret-value" {
		l.fail(w, 401, "invalid_client", "no client authentication")
		return
	}
	switch grant {
	case grantClientCreds:
	case jwtBearerGrantType:
		a := r.PostForm.Get("assertion")
		l.assertions = append(l.assertions, a)
		if a == l.refuse {
			l.fail(w, 400, "invalid_grant", "the assertion is not trusted")
			return
		}
		parsed, err := jwt.ParseSigned(a, []jose.SignatureAlgorithm{jose.ES256})
		key := &l.platformKey.PublicKey
		if err == nil && len(parsed.Headers) > 0 && parsed.Headers[0].ExtraHeaders["typ"] == "oauth-id-jag+jwt" {
			key = &l.jagKey.PublicKey
		}
		var c jwt.Claims
		if err == nil {
			err = parsed.Claims(key, &c)
		}
		if err == nil {
			err = c.Validate(jwt.Expected{AnyAudience: jwt.Audience{l.as.URL}, Time: time.Now()})
		}
		if err != nil {
			l.fail(w, 400, "invalid_grant", "assertion: "+err.Error())
			return
		}
	default:
		l.fail(w, 400, "unsupported_grant_type", grant)
		return
	}
	if r.PostForm.Get("resource") != l.mcp.URL+"/mcp" {
		l.fail(w, 400, "invalid_target", "resource "+r.PostForm.Get("resource"))
		return
	}
	l.tokens++
	writeJSON(w, 200, map[string]any{"access_token": fmt.Sprintf("access-token-%d", l.tokens), "token_type": "Bearer", "expires_in": 3600})
}

func (l *loopbackAS) serveIdP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		l.fail(w, 400, "invalid_request", err.Error())
		return
	}
	f := r.PostForm
	if id, secret, ok := r.BasicAuth(); !ok || id != "idp-client" || secret != "idp-secret-value" {
		l.fail(w, 401, "invalid_client", "idp client")
		return
	}
	if f.Get("grant_type") != tokenExchangeGrantType || f.Get("subject_token_type") != tokenTypeIDToken ||
		f.Get("requested_token_type") != tokenTypeIDJAG || f.Get("audience") != l.as.URL || f.Get("resource") != l.mcp.URL+"/mcp" {
		l.fail(w, 400, "invalid_request", "token exchange parameters")
		return
	}
	parsed, err := jwt.ParseSigned(f.Get("subject_token"), []jose.SignatureAlgorithm{jose.ES256})
	var c jwt.Claims
	if err == nil {
		err = parsed.Claims(&l.platformKey.PublicKey, &c)
	}
	if err != nil {
		l.fail(w, 400, "invalid_grant", "id token")
		return
	}
	l.mu.Lock()
	l.exchanges++
	l.mu.Unlock()
	now := time.Now()
	jag := sign(l.t, l.jagKey, "oauth-id-jag+jwt", map[string]any{"iss": l.idp.URL, "sub": c.Subject, "aud": l.as.URL, "client_id": "the-client",
		"resource": f.Get("resource"), "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": fmt.Sprint(now.UnixNano())})
	writeJSON(w, 200, map[string]any{"access_token": jag, "issued_token_type": tokenTypeIDJAG, "token_type": "N_A"})
}

func (l *loopbackAS) seen() (grants, assertions []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.grants...), append([]string(nil), l.assertions...)
}

// openWith starts the plugin for l's MCP server with settings, logging to
// logs.
func (l *loopbackAS) openWith(t *testing.T, settings map[string]any, logs *bytes.Buffer) *authenticator {
	t.Helper()
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Trace, Output: logs})
	a, err := open(context.Background(), auth.Config{Server: "workload", Method: "oauth", URL: l.mcp.URL + "/mcp", TokenDir: t.TempDir(), Settings: settings}, log)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func bearer(t *testing.T, a *authenticator) string {
	t.Helper()
	h, err := a.Headers(context.Background(), auth.HeadersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(h.Headers["Authorization"], "Bearer ")
}

// refused tells the plugin the MCP server refused its token (a 401), as
// the transport would, and returns the token of the retry.
func refused(t *testing.T, a *authenticator) string {
	t.Helper()
	ans, err := a.Challenge(context.Background(), auth.Challenge{Status: http.StatusUnauthorized}, nonInteractive{})
	if err != nil {
		t.Fatal(err)
	}
	if !ans.Retry {
		t.Fatal("no retry after a new token")
	}
	return strings.TrimPrefix(ans.Headers.Headers["Authorization"], "Bearer ")
}

type nonInteractive struct{}

func (nonInteractive) Interactive() bool                           { return false }
func (nonInteractive) OpenURL(context.Context, string) error       { return auth.ErrNoBrowser }
func (nonInteractive) Show(context.Context, auth.Notice) error     { return nil }
func (nonInteractive) Ask(context.Context, string) (string, error) { return "", auth.ErrNoBrowser }

// noSecrets fails when any secret appears in the plugin's log.
func noSecrets(t *testing.T, logs string, secrets map[string]string) {
	t.Helper()
	for what, s := range secrets {
		if s != "" && strings.Contains(logs, s) {
			t.Errorf("the %s appears in the plugin's log", what)
		}
	}
}

func TestJWTBearerWorkloadIdentity(t *testing.T) {
	l := newLoopbackAS(t, authPrivateKeyJWT)
	keyFile := writeKey(t, l.clientKey, "PRIVATE KEY", 0o600)
	tokenFile := filepath.Join(t.TempDir(), "token")
	first, second := l.workloadJWT("system:serviceaccount:ns:one"), l.workloadJWT("system:serviceaccount:ns:two")
	if err := os.WriteFile(tokenFile, []byte(first+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	a := l.openWith(t, map[string]any{"grant_type": "jwt_bearer", "client_id": "the-client", "assertion_file": tokenFile, "private_key_file": keyFile}, &logs)
	tok1 := bearer(t, a)
	if tok1 == "" {
		t.Fatal("no token")
	}
	// The kubelet rotates the projected token; the next token request
	// carries the new one.
	if err := os.WriteFile(tokenFile, []byte(second), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok2 := refused(t, a); tok2 == tok1 || tok2 == "" {
		t.Fatalf("after a 401 the plugin kept the refused token %q", tok2)
	}
	grants, assertions := l.seen()
	if len(assertions) != 2 || assertions[0] != first || assertions[1] != second {
		t.Fatalf("assertions sent: %d, want the first then the rotated one", len(assertions))
	}
	for _, g := range grants {
		if g != jwtBearerGrantType {
			t.Errorf("grant %s sent, want jwt-bearer only", g)
		}
	}
	st, err := a.Status(context.Background())
	if err != nil || !st.LoggedIn || !strings.Contains(st.Detail, "jwt_bearer") {
		t.Errorf("status %+v, %v", st, err)
	}
	pem, _ := os.ReadFile(keyFile)
	noSecrets(t, logs.String(), map[string]string{"first assertion": first, "second assertion": second, "token": tok1,
		"private key": strings.Split(string(pem), "\n")[1]})
}

func TestJWTBearerRefusedIsNotRetried(t *testing.T) {
	l := newLoopbackAS(t, "client_secret_basic")
	tokenFile := filepath.Join(t.TempDir(), "token")
	bad := l.workloadJWT("untrusted")
	l.refuse = bad
	if err := os.WriteFile(tokenFile, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	a := l.openWith(t, map[string]any{"grant_type": "jwt_bearer", "client_id": "the-client", "client_secret": "client-secret-value", "assertion_file": tokenFile}, &logs)
	_, err := a.Headers(context.Background(), auth.HeadersRequest{})
	if err == nil {
		t.Fatal("a refused grant gave a token")
	}
	msg := err.Error()
	for _, want := range []string{"'workload'", "grant jwt_bearer", "invalid_grant", "the assertion is not trusted"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %s", msg, want)
		}
	}
	if strings.Contains(msg, "\n") || strings.Contains(msg, bad) {
		t.Errorf("error %q: want one line without the assertion", msg)
	}
	// Asked again with the same assertion: the same report, no request.
	if _, err := a.Headers(context.Background(), auth.HeadersRequest{}); err == nil || err.Error() != msg {
		t.Errorf("second try: %v", err)
	}
	if _, err := a.Challenge(context.Background(), auth.Challenge{Status: http.StatusUnauthorized}, nonInteractive{}); err == nil {
		t.Error("a 401 after a refused grant got a token")
	}
	grants, assertions := l.seen()
	if len(grants) != 1 || len(assertions) != 1 {
		t.Fatalf("token requests %v: want the one jwt-bearer request, not retried nor another grant", grants)
	}
	// A rotated assertion is tried.
	good := l.workloadJWT("trusted")
	if err := os.WriteFile(tokenFile, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok := bearer(t, a); tok == "" {
		t.Fatal("no token after the assertion rotated")
	}
	noSecrets(t, logs.String(), map[string]string{"assertion": bad, "secret": "client-secret-value"})
}

func TestIDJAG(t *testing.T) {
	l := newLoopbackAS(t, "client_secret_basic")
	idToken := sign(t, l.platformKey, "JWT", map[string]any{"iss": l.idp.URL, "sub": "alice", "email": "alice@corp.example", "aud": "idp-client",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()})
	idFile := filepath.Join(t.TempDir(), "id-token")
	if err := os.WriteFile(idFile, []byte(idToken), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	a := l.openWith(t, map[string]any{"grant_type": "id_jag", "client_id": "the-client", "client_secret": "client-secret-value",
		"assertion_file": idFile, "idp_token_endpoint": l.idp.URL + "/token", "idp_client_id": "idp-client", "idp_client_secret": "idp-secret-value"}, &logs)
	tok := bearer(t, a)
	grants, assertions := l.seen()
	if tok == "" || l.exchanges != 1 || len(grants) != 1 || grants[0] != jwtBearerGrantType {
		t.Fatalf("token %q after %d exchanges and grants %v; want one exchange then one jwt-bearer grant", tok, l.exchanges, grants)
	}
	st, err := a.Status(context.Background())
	if err != nil || st.Account != "alice@corp.example" {
		t.Errorf("status account %q, %v; want the ID token's email", st.Account, err)
	}
	noSecrets(t, logs.String(), map[string]string{"ID token": idToken, "ID-JAG": assertions[0], "client secret": "client-secret-value",
		"IdP secret": "idp-secret-value", "token": tok})
}

func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	l := newLoopbackAS(t, authPrivateKeyJWT)
	keyFile := writeKey(t, l.clientKey, "EC PRIVATE KEY", 0o600)
	var logs bytes.Buffer
	a := l.openWith(t, map[string]any{"grant_type": "client_credentials", "client_id": "the-client", "private_key_file": keyFile, "private_key_id": "k1"}, &logs)
	if tok := bearer(t, a); tok == "" {
		t.Fatal("no token")
	}
	// An authorization server that does not take private_key_jwt says so.
	l2 := newLoopbackAS(t, "client_secret_basic")
	b := l2.openWith(t, map[string]any{"grant_type": "client_credentials", "client_id": "the-client", "private_key_file": keyFile}, &logs)
	if _, err := b.Headers(context.Background(), auth.HeadersRequest{}); err == nil || !strings.Contains(err.Error(), "does not accept private_key_jwt") {
		t.Errorf("an AS without private_key_jwt: %v", err)
	}
	pem, _ := os.ReadFile(keyFile)
	key := strings.Split(string(pem), "\n")[1]
	noSecrets(t, logs.String(), map[string]string{"private key": key})
}
