package identity

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/hashicorp/go-hclog"
)

// fixture is a gateway Authenticator trusting one loopback IdP, on a
// settable clock, logging everything into a buffer.
type fixture struct {
	idp  *testIdP
	clk  *clock
	a    *Authenticator
	logs *syncBuffer
}

type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	discard bool // keep nothing (a fuzzer's or a benchmark's millions of lines)
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.discard {
		return len(p), nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newFixture(t testing.TB, change func(*Config, *testIdP)) *fixture {
	f := &fixture{idp: newIdP(t), clk: newClock(), logs: &syncBuffer{}}
	cfg := Config{Resource: resource, Issuers: []IssuerConfig{f.idp.issuerConfig()}}
	if change != nil {
		change(&cfg, f.idp)
	}
	a, err := New(cfg, Options{
		Now:    f.clk.Now,
		Logger: hclog.New(&hclog.LoggerOptions{Output: f.logs, Level: hclog.Trace}),
		Env: func(names []string) (map[string]string, error) {
			return map[string]string{"IDP_CLIENT_ID": f.idp.clientID, "IDP_CLIENT_SECRET": f.idp.clientSec}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.a = a
	return f
}

// refusal checks that err is an *Error with status and code whose
// description contains want, and that neither it, its challenge, the
// answer written for it nor the logs hold tok.
func (f *fixture) refusal(t *testing.T, err error, tok string, status int, code, want string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an *Error", err)
	}
	if e.Status != status || e.Code != code || !strings.Contains(e.Description, want) {
		t.Fatalf("refusal = %d %q %q (%v), want %d %q containing %q", e.Status, e.Code, e.Description, e, status, code, want)
	}
	rec := httptest.NewRecorder()
	f.a.WriteError(rec, err)
	noToken(t, tok, e.Error(), e.Challenge(f.a.MetadataURL()), fmt.Sprint(rec.Header()), rec.Body.String(), f.logs.String())
	return e
}

// noToken fails when any of texts holds tok or its signature.
func noToken(t *testing.T, tok string, texts ...string) {
	t.Helper()
	parts := strings.Split(tok, ".")
	for _, s := range texts {
		if len(tok) >= 8 && strings.Contains(s, tok) {
			t.Fatalf("the token appears in %q", s)
		}
		if len(parts) == 3 && len(parts[2]) >= 8 && strings.Contains(s, parts[2]) {
			t.Fatalf("the token's signature appears in %q", s)
		}
	}
}

// Tokens signed with RSA, EC and Ed25519 keys are accepted; the Principal
// carries the claims the configuration names; discovery and the JWKS are
// fetched once for all of them.
func TestJWTAccepted(t *testing.T) {
	f := newFixture(t, nil)
	rk, ek, dk := rsaKey(t, "rsa-1"), ecKey(t, "ec-1"), edKey(t, "ed-1")
	f.idp.publish(rk, ek, dk)
	for _, k := range []signingKey{rk, ek, dk} {
		tok := k.sign(t, f.idp.claims(f.clk.Now()))
		p, err := f.a.Authenticate(bearer(tok))
		if err != nil {
			t.Fatalf("%s: %v", k.alg, err)
		}
		if p.Subject != "alice" || p.Issuer != f.idp.issuer || p.ClientID != "vscode" || p.Static ||
			!slices.Equal(p.Groups, []string{"dev", "ops"}) || !slices.Equal(p.Scopes, []string{"tools.read", "tools.call"}) ||
			p.Claims["jti"] != "id-1" {
			t.Fatalf("%s: principal = %+v", k.alg, p)
		}
	}
	if d, j := f.idp.discoveries.Load(), f.idp.jwksFetches.Load(); d != 1 || j != 1 {
		t.Fatalf("discovery fetched %d times, keys %d times; want once each", d, j)
	}
	if strings.Contains(f.logs.String(), "Bearer") {
		t.Fatalf("the log mentions a bearer token: %s", f.logs.String())
	}
}

// Claims are read from the configured places: a dotted path (Keycloak's
// realm_access.roles), scp when scope is absent (Entra), azp for the
// client.
func TestJWTClaimPlaces(t *testing.T) {
	f := newFixture(t, func(c *Config, idp *testIdP) {
		c.Issuers[0].GroupsClaim = "realm_access.roles"
	})
	k := rsaKey(t, "k")
	f.idp.publish(k)
	tok := k.sign(t, f.idp.claims(f.clk.Now(),
		"realm_access", map[string]any{"roles": []any{"admin", 3, "dev"}},
		"scope", nil, "scp", "a b", "client_id", nil, "azp", "cli"))
	p, err := f.a.AuthenticateToken(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Groups, []string{"admin", "dev"}) || !slices.Equal(p.Scopes, []string{"a", "b"}) || p.ClientID != "cli" {
		t.Fatalf("principal = %+v", p)
	}
}

// Every refusal of the issue: each answers 401 invalid_token (400 for a
// malformed request) with a description saying why, and no part of the
// token appears in the error, the challenge, the answer or the log.
func TestJWTRefusals(t *testing.T) {
	f := newFixture(t, nil)
	k := rsaKey(t, "rsa-1")
	f.idp.publish(k)
	now := f.clk.Now()
	other := newIdP(t) // an issuer the gateway does not accept
	otherKey := rsaKey(t, "rsa-1")
	other.publish(otherKey)
	attacker := rsaKey(t, "rsa-1") // the IdP's kid, another key

	// HS256 keyed with the IdP's public key (the classic confusion).
	der, err := x509.MarshalPKIXPublicKey(k.key.Public())
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	hs, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: pemKey}, (&jose.SignerOptions{}).WithHeader("kid", "rsa-1"))
	if err != nil {
		t.Fatal(err)
	}
	hsObj, err := hs.Sign(mustJSON(f.idp.claims(now)))
	if err != nil {
		t.Fatal(err)
	}
	hsTok, err := hsObj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	valid := k.sign(t, f.idp.claims(now))
	parts := strings.Split(valid, ".")

	cases := []struct {
		name, tok    string
		status       int
		code, reason string
	}{
		{"wrong audience", k.sign(t, f.idp.claims(now, "aud", "https://other.example.com/mcp")), 401, CodeInvalidToken, "audience (aud) does not include " + resource},
		{"no audience", k.sign(t, f.idp.claims(now, "aud", nil)), 401, CodeInvalidToken, "no audience"},
		{"expired", k.sign(t, f.idp.claims(now, "exp", now.Add(-2*time.Minute).Unix())), 401, CodeInvalidToken, "expired"},
		{"no expiry", k.sign(t, f.idp.claims(now, "exp", nil)), 401, CodeInvalidToken, "no expiry"},
		{"nbf in the future", k.sign(t, f.idp.claims(now, "nbf", now.Add(2*time.Minute).Unix())), 401, CodeInvalidToken, "not valid yet"},
		{"iat in the future", k.sign(t, f.idp.claims(now, "iat", now.Add(2*time.Minute).Unix())), 401, CodeInvalidToken, "issued in the future"},
		{"no subject", k.sign(t, f.idp.claims(now, "sub", nil)), 401, CodeInvalidToken, "no subject"},
		{"alg none", unsigned(f.idp.claims(now), "rsa-1"), 401, CodeInvalidToken, "not a signed JWT with an accepted algorithm"},
		{"HS256 signed with the public key", hsTok, 401, CodeInvalidToken, "not a signed JWT with an accepted algorithm"},
		{"another issuer", otherKey.sign(t, other.claims(now)), 401, CodeInvalidToken, "issuer is not accepted"},
		{"another issuer's key under our iss and kid", attacker.sign(t, f.idp.claims(now)), 401, CodeInvalidToken, "signature does not verify"},
		{"unknown kid", rsaKey(t, "rsa-2").sign(t, f.idp.claims(now)), 401, CodeInvalidToken, "key id is not among"},
		{"tampered claims", parts[0] + "." + mustB64(f.idp.claims(now, "sub", "mallory")) + "." + parts[2], 401, CodeInvalidToken, "signature does not verify"},
		{"oversized", k.sign(t, f.idp.claims(now, "pad", strings.Repeat("x", DefaultMaxTokenBytes))), 401, CodeInvalidToken, "longer than 16384 bytes (gateway.max_token_bytes)"},
		{"garbage characters", "!!not a token!!", 400, CodeInvalidRequest, "characters"},
		{"garbage JWT shape", "abc.def.ghi", 401, CodeInvalidToken, "not a signed JWT"},
		{"garbage opaque", "c29tZXRoaW5nIG9wYXF1ZQ", 401, CodeInvalidToken, "neither a JWT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.a.Authenticate(bearer(c.tok))
			f.refusal(t, err, c.tok, c.status, c.code, c.reason)
		})
	}
	// The valid token is still accepted after all that.
	if _, err := f.a.Authenticate(bearer(valid)); err != nil {
		t.Fatal(err)
	}
}

// The skew is configurable: with 10 s, a token expired 20 s ago is
// refused, one expired 5 s ago accepted.
func TestClockSkew(t *testing.T) {
	f := newFixture(t, func(c *Config, idp *testIdP) { c.ClockSkew = 10 * time.Second })
	k := ecKey(t, "ec")
	f.idp.publish(k)
	now := f.clk.Now()
	if _, err := f.a.AuthenticateToken(context.Background(), k.sign(t, f.idp.claims(now, "exp", now.Add(-5*time.Second).Unix()))); err != nil {
		t.Fatalf("within the skew: %v", err)
	}
	tok := k.sign(t, f.idp.claims(now, "exp", now.Add(-20*time.Second).Unix()))
	_, err := f.a.AuthenticateToken(context.Background(), tok)
	f.refusal(t, err, tok, 401, CodeInvalidToken, "expired")
}

// An algorithm outside the issuer's own list is refused even when another
// issuer accepts it.
func TestAlgorithmPerIssuer(t *testing.T) {
	second := newIdP(t)
	f := newFixture(t, func(c *Config, idp *testIdP) {
		c.Issuers[0].Algorithms = []string{"ES256"}
		c.Issuers = append(c.Issuers, IssuerConfig{Issuer: second.issuer})
	})
	k := rsaKey(t, "rsa")
	f.idp.publish(k)
	tok := k.sign(t, f.idp.claims(f.clk.Now()))
	_, err := f.a.AuthenticateToken(context.Background(), tok)
	f.refusal(t, err, tok, 401, CodeInvalidToken, "algorithm RS256 is not accepted")
	if f.idp.jwksFetches.Load() != 0 {
		t.Fatal("keys fetched for a token refused by its algorithm")
	}
}

// Key rotation: a token under a new kid makes the keys be fetched again,
// once, and is accepted; a kid rotated in within the refetch bound waits
// for the bound.
func TestKeyRotation(t *testing.T) {
	f := newFixture(t, nil)
	k1, k2, k3 := rsaKey(t, "2026-1"), ecKey(t, "2026-2"), rsaKey(t, "2026-3")
	f.idp.publish(k1)
	if _, err := f.a.AuthenticateToken(context.Background(), k1.sign(t, f.idp.claims(f.clk.Now()))); err != nil {
		t.Fatal(err)
	}
	f.clk.Add(DefaultJWKSRefetchInterval + time.Second)
	f.idp.publish(k1, k2)
	for range 3 {
		if _, err := f.a.AuthenticateToken(context.Background(), k2.sign(t, f.idp.claims(f.clk.Now()))); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.idp.jwksFetches.Load(); n != 2 {
		t.Fatalf("keys fetched %d times, want 2 (the first and one for the new kid)", n)
	}
	// Rotated again right away: refused until the bound has passed.
	f.idp.publish(k2, k3)
	tok := k3.sign(t, f.idp.claims(f.clk.Now()))
	_, err := f.a.AuthenticateToken(context.Background(), tok)
	f.refusal(t, err, tok, 401, CodeInvalidToken, "key id is not among")
	f.clk.Add(DefaultJWKSRefetchInterval)
	if _, err := f.a.AuthenticateToken(context.Background(), k3.sign(t, f.idp.claims(f.clk.Now()))); err != nil {
		t.Fatal(err)
	}
	if n := f.idp.jwksFetches.Load(); n != 3 {
		t.Fatalf("keys fetched %d times, want 3", n)
	}
	// The withdrawn k1 keeps verifying until the keys' max age, then not.
	f.clk.Add(DefaultJWKSMaxAge)
	tok = k1.sign(t, f.idp.claims(f.clk.Now()))
	_, err = f.a.AuthenticateToken(context.Background(), tok)
	f.refusal(t, err, tok, 401, CodeInvalidToken, "key id is not among")
}

// A flood of tokens under unknown kids, from many goroutines at once,
// makes at most one fetch per bound.
func TestUnknownKidFlood(t *testing.T) {
	f := newFixture(t, nil)
	k := rsaKey(t, "real")
	f.idp.publish(k)
	if _, err := f.a.AuthenticateToken(context.Background(), k.sign(t, f.idp.claims(f.clk.Now()))); err != nil {
		t.Fatal(err)
	}
	forger := ecKey(t, "")
	flood := func() {
		var wg sync.WaitGroup
		for i := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				forger := forger
				forger.kid = fmt.Sprintf("made-up-%d", i)
				_, err := f.a.AuthenticateToken(context.Background(), forger.sign(t, f.idp.claims(f.clk.Now())))
				var e *Error
				if !errors.As(err, &e) || e.Code != CodeInvalidToken {
					t.Errorf("unknown kid: %v", err)
				}
			}()
		}
		wg.Wait()
	}
	flood()
	if n := f.idp.jwksFetches.Load(); n != 1 {
		t.Fatalf("keys fetched %d times within the bound, want 1", n)
	}
	f.clk.Add(DefaultJWKSRefetchInterval)
	flood()
	if n := f.idp.jwksFetches.Load(); n != 2 {
		t.Fatalf("keys fetched %d times after the bound, want 2", n)
	}
	// The real key still works and fetches nothing.
	if _, err := f.a.AuthenticateToken(context.Background(), k.sign(t, f.idp.claims(f.clk.Now()))); err != nil {
		t.Fatal(err)
	}
	if n := f.idp.jwksFetches.Load(); n != 2 {
		t.Fatalf("keys fetched %d times, want 2", n)
	}
}

// An issuer with only RFC 8414 metadata is found too.
func TestRFC8414Discovery(t *testing.T) {
	f := newFixture(t, nil)
	f.idp.set(func(p *testIdP) { p.noOIDC = true })
	k := edKey(t, "ed")
	f.idp.publish(k)
	if _, err := f.a.AuthenticateToken(context.Background(), k.sign(t, f.idp.claims(f.clk.Now()))); err != nil {
		t.Fatal(err)
	}
}

// Metadata naming another issuer is not believed: the token cannot be
// checked (503), and the error says why.
func TestDiscoveryIssuerMismatch(t *testing.T) {
	f := newFixture(t, nil)
	f.idp.set(func(p *testIdP) { p.metaIss = "https://evil.example.com" })
	k := rsaKey(t, "k")
	f.idp.publish(k)
	tok := k.sign(t, f.idp.claims(f.clk.Now()))
	_, err := f.a.AuthenticateToken(context.Background(), tok)
	e := f.refusal(t, err, tok, 503, CodeUnavailable, "could not be fetched")
	if !strings.Contains(e.Error(), `names issuer "https://evil.example.com"`) {
		t.Fatalf("error = %v", e)
	}
	if f.idp.jwksFetches.Load() != 0 {
		t.Fatal("keys fetched from metadata of another issuer")
	}
	if err := f.a.Warm(context.Background()); err == nil {
		t.Fatal("Warm reports no failure")
	}
}

// Fetches are bounded in size and time, and the errors name the key.
func TestFetchBounds(t *testing.T) {
	t.Run("size", func(t *testing.T) {
		f := newFixture(t, func(c *Config, idp *testIdP) { c.MaxFetchBytes = 4096 })
		f.idp.set(func(p *testIdP) { p.jwksBody = []byte(`{"keys":[` + strings.Repeat(" ", 8192) + `]}`) })
		tok := rsaKey(t, "k").sign(t, f.idp.claims(f.clk.Now()))
		_, err := f.a.AuthenticateToken(context.Background(), tok)
		e := f.refusal(t, err, tok, 503, CodeUnavailable, "could not be fetched")
		if !strings.Contains(e.Error(), "4096 bytes (gateway.max_fetch_bytes)") {
			t.Fatalf("error = %v", e)
		}
		if e.RetryAfter <= 0 {
			t.Fatalf("no Retry-After: %+v", e)
		}
	})
	t.Run("time", func(t *testing.T) {
		f := newFixture(t, func(c *Config, idp *testIdP) { c.FetchTimeout = 100 * time.Millisecond })
		f.idp.set(func(p *testIdP) { p.hangJWKS = true })
		tok := rsaKey(t, "k").sign(t, f.idp.claims(f.clk.Now()))
		_, err := f.a.AuthenticateToken(context.Background(), tok)
		e := f.refusal(t, err, tok, 503, CodeUnavailable, "could not be fetched")
		if !strings.Contains(e.Error(), "within 100ms (gateway.fetch_timeout)") {
			t.Fatalf("error = %v", e)
		}
	})
	t.Run("too many keys", func(t *testing.T) {
		f := newFixture(t, nil)
		f.idp.set(func(p *testIdP) {
			p.jwksBody = []byte(`{"keys":[` + strings.Repeat(`{},`, maxKeys) + `{}]}`)
		})
		tok := rsaKey(t, "k").sign(t, f.idp.claims(f.clk.Now()))
		_, err := f.a.AuthenticateToken(context.Background(), tok)
		e := f.refusal(t, err, tok, 503, CodeUnavailable, "could not be fetched")
		if !strings.Contains(e.Error(), "more than 100") {
			t.Fatalf("error = %v", e)
		}
	})
}

// An unreachable issuer is asked again only once per bound: requests in
// between are answered 503 without a fetch.
func TestUnreachableIssuerBounded(t *testing.T) {
	f := newFixture(t, nil)
	f.idp.set(func(p *testIdP) { p.jwksBody = []byte("not json") })
	tok := rsaKey(t, "k").sign(t, f.idp.claims(f.clk.Now()))
	for range 5 {
		_, err := f.a.AuthenticateToken(context.Background(), tok)
		f.refusal(t, err, tok, 503, CodeUnavailable, "could not be fetched")
	}
	if n := f.idp.jwksFetches.Load(); n != 1 {
		t.Fatalf("keys fetched %d times, want 1", n)
	}
}

// Static tokens: the configured sha256 matches the presented token; any
// other token is refused; the Principal says it is static.
func TestStaticTokens(t *testing.T) {
	token := "a-long-random-static-token-for-alice"
	sum := sha256.Sum256([]byte(token))
	f := newFixture(t, func(c *Config, idp *testIdP) {
		c.Issuers = nil
		c.Tokens = []StaticToken{
			{Subject: "bob", SHA256: strings.Repeat("0", 64)},
			{Subject: "alice", SHA256: strings.ToUpper(hex.EncodeToString(sum[:])), Groups: []string{"dev"}, Scopes: []string{"tools.read"}},
		}
	})
	p, err := f.a.Authenticate(bearer(token))
	if err != nil {
		t.Fatal(err)
	}
	if p.Subject != "alice" || !p.Static || p.Issuer != "" || !slices.Equal(p.Groups, []string{"dev"}) || !p.HasScope("tools.read") {
		t.Fatalf("principal = %+v", p)
	}
	p.Groups[0] = "changed" // a caller's change does not reach the next request
	if p2, _ := f.a.Authenticate(bearer(token)); p2.Groups[0] != "dev" {
		t.Fatal("the configured principal was changed through a returned one")
	}
	wrong := token + "x"
	_, err = f.a.Authenticate(bearer(wrong))
	f.refusal(t, err, wrong, 401, CodeInvalidToken, "neither a JWT nor a configured static token")
	jwtShaped := "aaaaaaaa.bbbbbbbb.cccccccc"
	_, err = f.a.Authenticate(bearer(jwtShaped))
	f.refusal(t, err, jwtShaped, 401, CodeInvalidToken, "no issuer is configured")
}

// Opaque tokens go to the introspection endpoint with the gateway's
// client credentials; an active answer is cached briefly by the token's
// hash, an inactive one refused, an answer for another audience refused.
func TestIntrospection(t *testing.T) {
	f := newFixture(t, func(c *Config, idp *testIdP) {
		c.Issuers[0].Introspection = &IntrospectionConfig{
			Endpoint:        idp.srv.URL + "/realms/team/introspect",
			ClientIDEnv:     "IDP_CLIENT_ID",
			ClientSecretEnv: "IDP_CLIENT_SECRET",
			CacheSize:       2,
		}
	})
	idp, clk, a := f.idp, f.clk, f.a
	now := clk.Now()
	answer := func(over ...any) map[string]any {
		c := idp.claims(now, over...)
		c["active"] = true
		return c
	}
	idp.set(func(p *testIdP) {
		p.active["opaque-alice"] = answer("exp", now.Add(time.Hour).Unix())
		p.active["opaque-elsewhere"] = answer("aud", "https://other.example.com")
		p.active["opaque-noiss"] = answer("iss", nil, "sub", "carol")
	})
	ctx := context.Background()
	p, err := a.AuthenticateToken(ctx, "opaque-alice")
	if err != nil {
		t.Fatal(err)
	}
	if p.Subject != "alice" || p.Issuer != idp.issuer || !slices.Equal(p.Groups, []string{"dev", "ops"}) || p.HasScope("active") || p.Claims["active"] != nil {
		t.Fatalf("principal = %+v", p)
	}
	if _, err := a.AuthenticateToken(ctx, "opaque-alice"); err != nil {
		t.Fatal(err)
	}
	if n := idp.introspections.Load(); n != 1 {
		t.Fatalf("introspected %d times, want 1 (the second answer cached)", n)
	}
	clk.Add(DefaultIntrospectionTTL)
	if _, err := a.AuthenticateToken(ctx, "opaque-alice"); err != nil {
		t.Fatal(err)
	}
	if n := idp.introspections.Load(); n != 2 {
		t.Fatalf("introspected %d times, want 2 (the cache entry expired)", n)
	}
	if p, err := a.AuthenticateToken(ctx, "opaque-noiss"); err != nil || p.Subject != "carol" {
		t.Fatalf("an answer without iss (the endpoint speaks for its issuer): %v %+v", err, p)
	}
	_, err = a.AuthenticateToken(ctx, "opaque-inactive")
	f.refusal(t, err, "opaque-inactive", 401, CodeInvalidToken, "not active")
	_, err = a.AuthenticateToken(ctx, "opaque-elsewhere")
	f.refusal(t, err, "opaque-elsewhere", 401, CodeInvalidToken, "audience (aud) does not include")
	if n := a.opaque.intro.cache.len(); n > 2 {
		t.Fatalf("cache holds %d answers, bound 2", n)
	}
	// A JWT of the introspecting issuer is introspected too (the issuer
	// decides whether it is still active).
	k := rsaKey(t, "k")
	jwtTok := k.sign(t, idp.claims(now))
	before := idp.introspections.Load()
	_, err = a.AuthenticateToken(ctx, jwtTok)
	f.refusal(t, err, jwtTok, 401, CodeInvalidToken, "not active")
	if idp.introspections.Load() != before+1 || idp.jwksFetches.Load() != 0 {
		t.Fatal("the JWT was not introspected")
	}
	// The endpoint refusing the gateway's credentials: 503, not the
	// person's fault.
	idp.set(func(p *testIdP) { p.clientID = "someone-else" })
	_, err = a.AuthenticateToken(ctx, "opaque-new")
	e := f.refusal(t, err, "opaque-new", 503, CodeUnavailable, "could not be asked")
	if strings.Contains(e.Error(), idp.clientSec) || strings.Contains(f.logs.String(), idp.clientSec) {
		t.Fatal("the client secret appears in an error or the log")
	}
}

// The resource metadata: at the RFC 9728 path of the resource and at the
// bare well-known path, with the fields clients need.
func TestMetadata(t *testing.T) {
	f := newFixture(t, func(c *Config, idp *testIdP) { c.ScopesSupported = []string{"tools.read", "tools.call"} })
	if got, want := f.a.MetadataURL(), "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"; got != want {
		t.Fatalf("metadata URL = %s, want %s", got, want)
	}
	h := f.a.MetadataHandler()
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %v", path, rec.Code, rec.Header())
		}
		want := fmt.Sprintf(`{"resource":%q,"authorization_servers":[%q],"scopes_supported":["tools.read","tools.call"],"bearer_methods_supported":["header"]}`, resource, f.idp.issuer)
		if rec.Body.String() != want {
			t.Fatalf("%s: document = %s\nwant %s", path, rec.Body, want)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource/other", nil))
	if rec.Code != 404 {
		t.Fatalf("another path: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/.well-known/oauth-protected-resource", nil))
	if rec.Code != 405 {
		t.Fatalf("POST: %d", rec.Code)
	}
}

// The middleware over a real loopback server: the challenge without a
// token, invalid_token with one, insufficient_scope naming the missing
// scope, and an accepted request reaching the handler with its Principal
// and without its Authorization header.
func TestMiddleware(t *testing.T) {
	f := newFixture(t, nil)
	k := rsaKey(t, "k")
	f.idp.publish(k)
	type seen struct {
		p    *Principal
		auth string
	}
	got := make(chan seen, 1)
	mux := http.NewServeMux()
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := FromContext(r.Context())
		got <- seen{p, r.Header.Get("Authorization")}
	})
	mux.Handle("/mcp", f.a.Middleware(inner))
	mux.Handle("/admin", f.a.Middleware(f.a.RequireScopes("tools.read", "admin.write")(inner)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	metaHeader := `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`

	do := func(path string, header ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Add(header[i], header[i+1])
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	expect := func(resp *http.Response, status int, challenge string) {
		t.Helper()
		if resp.StatusCode != status || resp.Header.Get("WWW-Authenticate") != challenge {
			t.Fatalf("answer = %d %q, want %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), status, challenge)
		}
	}
	expect(do("/mcp"), 401, metaHeader)
	expect(do("/mcp", "Authorization", "Basic YWxpY2U6cHc="), 401, metaHeader)
	expect(do("/mcp", "Authorization", "Bearer abc.def.ghi"), 401,
		metaHeader+`, error="invalid_token", error_description="the token is not a signed JWT with an accepted algorithm"`)
	expect(do("/mcp?access_token=abc", "Authorization", "Bearer abc"), 400, "")
	expect(do("/mcp", "Authorization", "Bearer a", "Authorization", "Bearer b"), 400, "")

	tok := k.sign(t, f.idp.claims(f.clk.Now()))
	expect(do("/mcp", "Authorization", "Bearer "+tok), 200, "")
	s := <-got
	if s.p == nil || s.p.Subject != "alice" || s.auth != "" {
		t.Fatalf("the handler saw principal %+v and Authorization %q", s.p, s.auth)
	}
	expect(do("/admin", "Authorization", "bearer "+tok), 403,
		metaHeader+`, error="insufficient_scope", error_description="the token lacks scope admin.write", scope="admin.write"`)
	tok = k.sign(t, f.idp.claims(f.clk.Now(), "scope", "tools.read admin.write"))
	expect(do("/admin", "Authorization", "Bearer "+tok), 200, "")
	<-got
}

// Bad configurations are refused at start, each naming its key.
func TestConfigErrors(t *testing.T) {
	good := IssuerConfig{Issuer: "https://idp.example.com/realms/team"}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no resource", Config{Issuers: []IssuerConfig{good}}, "gateway.resource:"},
		{"http resource", Config{Resource: "http://mcp.example.com/mcp", Issuers: []IssuerConfig{good}}, "gateway.resource: \"http://mcp.example.com/mcp\" must be https"},
		{"resource fragment", Config{Resource: resource + "#x", Issuers: []IssuerConfig{good}}, "has a fragment"},
		{"nobody", Config{Resource: resource}, "neither issuers nor tokens"},
		{"alg none", Config{Resource: resource, Issuers: []IssuerConfig{{Issuer: good.Issuer, Algorithms: []string{"none"}}}}, "gateway.issuers[0].algorithms[0]: \"none\" is not accepted"},
		{"HMAC", Config{Resource: resource, Issuers: []IssuerConfig{{Issuer: good.Issuer, Algorithms: []string{"RS256", "HS256"}}}}, "gateway.issuers[0].algorithms[1]: \"HS256\""},
		{"issuer twice", Config{Resource: resource, Issuers: []IssuerConfig{good, good}}, "gateway.issuers[1].issuer: \"https://idp.example.com/realms/team\" is also gateway.issuers[0]"},
		{"http issuer", Config{Resource: resource, Issuers: []IssuerConfig{{Issuer: "http://idp.example.com"}}}, "gateway.issuers[0].issuer:"},
		{"skew", Config{Resource: resource, Issuers: []IssuerConfig{good}, ClockSkew: time.Hour}, "gateway.clock_skew:"},
		{"max age", Config{Resource: resource, Issuers: []IssuerConfig{{Issuer: good.Issuer, JWKSMaxAge: time.Second}}}, "gateway.issuers[0].jwks_max_age:"},
		{"introspection endpoint", Config{Resource: resource, Issuers: []IssuerConfig{{Issuer: good.Issuer, Introspection: &IntrospectionConfig{Endpoint: "ftp://x", ClientIDEnv: "A", ClientSecretEnv: "B"}}}}, "gateway.issuers[0].introspection.endpoint:"},
		{"introspection secret", Config{Resource: resource, Issuers: []IssuerConfig{{Issuer: good.Issuer, Introspection: &IntrospectionConfig{Endpoint: "https://idp.example.com/i", ClientIDEnv: "A"}}}}, "gateway.issuers[0].introspection.client_secret_env: missing"},
		{"introspection env unset", Config{Resource: resource, Issuers: []IssuerConfig{{Issuer: good.Issuer, Introspection: &IntrospectionConfig{Endpoint: "https://idp.example.com/i", ClientIDEnv: "HERMES_TEST_UNSET_ID", ClientSecretEnv: "HERMES_TEST_UNSET_SECRET"}}}}, "gateway.issuers[0].introspection.client_id_env: HERMES_TEST_UNSET_ID is not set"},
		{"two introspecting", Config{Resource: resource, Issuers: []IssuerConfig{
			{Issuer: good.Issuer, Introspection: &IntrospectionConfig{Endpoint: "https://idp.example.com/i", ClientIDEnv: "A", ClientSecretEnv: "B"}},
			{Issuer: "https://other.example.com", Introspection: &IntrospectionConfig{Endpoint: "https://other.example.com/i", ClientIDEnv: "A", ClientSecretEnv: "B"}},
		}}, "gateway.issuers[1].introspection: gateway.issuers[0] introspects already"},
		{"token hash", Config{Resource: resource, Tokens: []StaticToken{{Subject: "a", SHA256: "abc"}}}, "gateway.tokens[0].sha256: not 64 hex digits"},
		{"token subject", Config{Resource: resource, Tokens: []StaticToken{{SHA256: strings.Repeat("a", 64)}}}, "gateway.tokens[0].subject: missing"},
		{"token twice", Config{Resource: resource, Tokens: []StaticToken{{Subject: "a", SHA256: strings.Repeat("a", 64)}, {Subject: "b", SHA256: strings.Repeat("A", 64)}}}, "gateway.tokens[1].sha256: the same as gateway.tokens[0]"},
		{"scope", Config{Resource: resource, Issuers: []IssuerConfig{good}, ScopesSupported: []string{"a b"}}, "gateway.scopes_supported[0]:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.cfg, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func mustJSON(v any) []byte {
	b, err := jsonMarshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func mustB64(v any) string {
	return b64(mustJSON(v))
}

// A verified token is reused from the cache, never past its expiry (with
// the skew) nor its TTL, and the cache keeps at most its bound.
func TestVerifiedCache(t *testing.T) {
	f := newFixture(t, func(c *Config, _ *testIdP) { c.TokenCacheSize = 2 })
	k := rsaKey(t, "k")
	f.idp.publish(k)
	now := f.clk.Now()
	tok := k.sign(t, f.idp.claims(now, "exp", now.Add(30*time.Second).Unix()))
	for range 2 {
		if _, err := f.a.AuthenticateToken(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.a.verified.len(); n != 1 {
		t.Fatalf("cache holds %d tokens, want 1", n)
	}
	f.clk.Add(30*time.Second + DefaultClockSkew + time.Second)
	_, err := f.a.AuthenticateToken(context.Background(), tok)
	f.refusal(t, err, tok, 401, CodeInvalidToken, "expired")
	for i := range 5 {
		if _, err := f.a.AuthenticateToken(context.Background(), k.sign(t, f.idp.claims(f.clk.Now(), "jti", fmt.Sprint(i)))); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.a.verified.len(); n > 2 {
		t.Fatalf("cache holds %d tokens, bound 2", n)
	}
}

// A key withdrawn from the JWKS (seen at the next fetch) stops a cached
// token at the cache's TTL.
func TestVerifiedCacheWithdrawnKey(t *testing.T) {
	f := newFixture(t, nil)
	k := rsaKey(t, "k")
	f.idp.publish(k)
	tok := k.sign(t, f.idp.claims(f.clk.Now()))
	if _, err := f.a.AuthenticateToken(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	k2 := rsaKey(t, "k2")
	f.idp.publish(k2)
	f.clk.Add(DefaultJWKSRefetchInterval)
	if _, err := f.a.AuthenticateToken(context.Background(), k2.sign(t, f.idp.claims(f.clk.Now()))); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.AuthenticateToken(context.Background(), tok); err != nil {
		t.Fatalf("the cached token, within its TTL: %v", err)
	}
	f.clk.Add(DefaultTokenCacheTTL - DefaultJWKSRefetchInterval)
	_, err := f.a.AuthenticateToken(context.Background(), tok)
	f.refusal(t, err, tok, 401, CodeInvalidToken, "key id is not among")
}

// A client hanging up while its request fetches the keys does not cut the
// fetch short: the fetch serves every request, and a cancelled one would
// leave the issuer without keys until the refetch bound.
func TestFetchOutlivesItsRequest(t *testing.T) {
	f := newFixture(t, nil)
	k := rsaKey(t, "k")
	f.idp.publish(k)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.idp.set(func(p *testIdP) {
		p.jwksHook = func() {
			once.Do(func() { close(entered) })
			<-release
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.a.AuthenticateToken(ctx, k.sign(t, f.idp.claims(f.clk.Now())))
		done <- err
	}()
	<-entered
	cancel()
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the request that started the fetch: %v", err)
	}
	if _, err := f.a.AuthenticateToken(context.Background(), k.sign(t, f.idp.claims(f.clk.Now(), "jti", "2"))); err != nil {
		t.Fatal(err)
	}
	if n := f.idp.jwksFetches.Load(); n != 1 {
		t.Fatalf("keys fetched %d times, want 1", n)
	}
}
