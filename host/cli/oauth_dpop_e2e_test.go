package cli_test

import (
	"crypto"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testoauth"
)

// dpopRig is an oauthRig whose resource takes DPoP-bound tokens only and
// wants its nonce in every proof, behind an authorization server that
// wants its own nonce too.
func newDPoPRig(t *testing.T) *oauthRig {
	t.Helper()
	testbin.Path(t, "hermes-auth-oauth")
	testbin.Path(t, "hermes-transport-http")
	as := testoauth.Start(t, testoauth.Options{DPoPNonce: true})
	return &oauthRig{t: t, as: as, url: as.StartResourceServer(t, "--oauth-dpop", "--oauth-dpop-nonce"), home: newHome(t)}
}

// storedToken is what the token file of "notes" holds.
type storedToken struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	RefreshToken string `json:"refresh_token"`
}

func (r *oauthRig) tokenFile() string { return filepath.Join(r.home, "mcp-tokens", "notes.json") }
func (r *oauthRig) keyFile() string   { return filepath.Join(r.home, "mcp-tokens", "notes.dpop.json") }

func (r *oauthRig) token() storedToken {
	r.t.Helper()
	var tok storedToken
	b, err := os.ReadFile(r.tokenFile())
	if err != nil || json.Unmarshal(b, &tok) != nil || tok.AccessToken == "" {
		r.t.Fatalf("token file: %v\n%s", err, b)
	}
	return tok
}

// dpopKey returns the kept key's private d and its public thumbprint,
// checking that the file is the plugin's alone (0600).
func (r *oauthRig) dpopKey() (d, thumb string) {
	r.t.Helper()
	fi, err := os.Stat(r.keyFile())
	if err != nil || fi.Mode().Perm() != 0o600 {
		r.t.Fatalf("key file: %v, %v", fi, err)
	}
	b, _ := os.ReadFile(r.keyFile())
	var jwk jose.JSONWebKey
	var raw struct {
		D string `json:"d"`
	}
	if err := jwk.UnmarshalJSON(b); err != nil || jwk.IsPublic() || json.Unmarshal(b, &raw) != nil || raw.D == "" {
		r.t.Fatalf("the key file holds no private JWK: %v", err)
	}
	pub := jwk.Public()
	sum, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		r.t.Fatal(err)
	}
	return raw.D, base64.RawURLEncoding.EncodeToString(sum)
}

// jkt reads the cnf.jkt of a JWT access token (not verified: the resource
// server did that).
func jkt(t *testing.T, accessToken string) string {
	t.Helper()
	parts := strings.Split(accessToken, ".")
	if len(parts) != 3 {
		t.Fatalf("the access token is not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct {
		Cnf struct {
			JKT string `json:"jkt"`
		} `json:"cnf"`
	}
	if err != nil || json.Unmarshal(b, &c) != nil {
		t.Fatalf("the access token's claims do not decode: %v", err)
	}
	return c.Cnf.JKT
}

// expire makes the stored token look expired, so that the next command
// refreshes it (the authorization server's token is still valid: the
// refresh is the plugin's decision, read from the file).
func (r *oauthRig) expire() {
	r.t.Helper()
	b, err := os.ReadFile(r.tokenFile())
	if err != nil {
		r.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		r.t.Fatal(err)
	}
	m["expires_at"] = time.Now().Add(-time.Minute).Unix()
	b, _ = json.Marshal(m)
	if err := os.WriteFile(r.tokenFile(), b, 0o600); err != nil {
		r.t.Fatal(err)
	}
}

// DPoP end to end, through the built hermes and its real plugins, against
// oidc-provider with DPoP and nonces on and a resource that takes
// DPoP-bound tokens only, checks every proof (htm, htu, ath, cnf.jkt, jti,
// iat) and wants its nonce (oauth.dpop left at auto: the resource's
// challenge and metadata ask for DPoP). A login makes the key (0600) and
// gets a token bound to it; a tool call works; a refresh gets a new token
// bound to the same key, and the call after it works; a logout removes the
// key, and the next login makes another. No token, refresh token, private
// key or proof appears in any output, -v included, or in any log.
func TestOAuthDPoPEndToEnd(t *testing.T) {
	t.Parallel()
	r := newDPoPRig(t)
	r.config()
	ctx := r.ctx()
	browser, _ := fakeBrowser(t, false)
	var shown strings.Builder
	keep := func(res runResult) runResult {
		shown.WriteString(res.stdout + res.stderr)
		return res
	}

	res := keep(runHermesEnv(t, r.home, []string{browser}, "-v", "mcp", "login", "notes").must(t, 0))
	if !strings.Contains(res.stdout, "✓ Logged in to 'notes'") || !strings.Contains(res.stdout, "✓ Connected") {
		t.Fatalf("login:\n%s\n%s", res.stdout, res.stderr)
	}
	first := r.token()
	d1, thumb1 := r.dpopKey()
	if first.TokenType != "DPoP" || jkt(t, first.AccessToken) != thumb1 {
		t.Fatalf("the token is %s, bound to %q; the key's thumbprint is %s", first.TokenType, jkt(t, first.AccessToken), thumb1)
	}

	res = keep(runHermes(t, r.home, "-v", "mcp", "call", "notes", "echo", "--arg", "message=bound-1").must(t, 0))
	if !strings.Contains(res.stdout, "bound-1") {
		t.Fatalf("call:\n%s\n%s", res.stdout, res.stderr)
	}

	before := r.stats(ctx)
	r.expire()
	res = keep(runHermes(t, r.home, "-v", "mcp", "call", "notes", "echo", "--arg", "message=bound-2").must(t, 0))
	if !strings.Contains(res.stdout, "bound-2") {
		t.Fatalf("call after the refresh:\n%s\n%s", res.stdout, res.stderr)
	}
	// One refresh; a new process knows no nonce yet, so its first
	// attempt may be answered use_dpop_nonce and sent again with it.
	if s := r.stats(ctx); s.refreshes != before.refreshes+1 || s.attempts > before.attempts+2 || s.reuses != 0 {
		t.Fatalf("refreshes %+v, then %+v: want one more, after at most one use_dpop_nonce", before, s)
	}
	second := r.token()
	d2, thumb2 := r.dpopKey()
	if second.AccessToken == first.AccessToken || second.TokenType != "DPoP" || d2 != d1 || thumb2 != thumb1 || jkt(t, second.AccessToken) != thumb1 {
		t.Fatalf("after the refresh: a new token %v, type %s, the same key %v, bound to it %v",
			second.AccessToken != first.AccessToken, second.TokenType, thumb2 == thumb1, jkt(t, second.AccessToken) == thumb1)
	}
	keep(runHermes(t, r.home, "mcp", "call", "notes", "echo", "--arg", "message=bound-3").must(t, 0))
	if res = keep(runHermes(t, r.home, "-v", "mcp", "auth-status").must(t, 0)); !strings.Contains(res.stdout, "✓ notes (oauth): ok") {
		t.Errorf("auth-status of a live DPoP grant:\n%s", res.stdout)
	}

	keep(runHermes(t, r.home, "-v", "mcp", "logout", "notes").must(t, 0))
	if _, err := os.Stat(r.keyFile()); !os.IsNotExist(err) {
		t.Fatalf("the key outlived the logout: %v", err)
	}
	keep(runHermesEnv(t, r.home, []string{browser}, "mcp", "login", "notes").must(t, 0))
	third := r.token()
	d3, thumb3 := r.dpopKey()
	if thumb3 == thumb1 || d3 == d1 || jkt(t, third.AccessToken) != thumb3 {
		t.Fatalf("the login after the logout kept the old key (%v) or bound the token to another (%v)", thumb3 == thumb1, jkt(t, third.AccessToken) != thumb3)
	}
	keep(runHermes(t, r.home, "-v", "mcp", "call", "notes", "echo", "--arg", "message=bound-4").must(t, 0))

	// Every output and every log, for every secret and for anything
	// shaped like a JWT (the access tokens and the proofs are JWTs).
	logs := shown.String()
	_ = filepath.WalkDir(filepath.Join(r.home, "logs"), func(path string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			b, _ := os.ReadFile(path)
			logs += string(b)
		}
		return nil
	})
	if !strings.Contains(logs, "bound-4") || !strings.Contains(logs, "hermes-auth-oauth: DPoP key made") {
		t.Fatalf("the outputs and the plugin's log were not gathered:\n%s", logs)
	}
	for what, secret := range map[string]string{
		"the first access token": first.AccessToken, "the first refresh token": first.RefreshToken,
		"the refreshed access token": second.AccessToken, "the refreshed refresh token": second.RefreshToken,
		"the last access token": third.AccessToken, "the last refresh token": third.RefreshToken,
		"the first key's d": d1, "the second key's d": d3,
	} {
		if secret == "" {
			t.Errorf("%s is empty", what)
			continue
		}
		if i := strings.Index(logs, secret); i >= 0 {
			t.Errorf("%s was shown: %s", what, logs[max(0, i-200):i])
		}
	}
	if m := regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+`).FindString(logs); m != "" {
		t.Errorf("a JWT (a token or a proof) was shown: %.40s…", m)
	}
}
