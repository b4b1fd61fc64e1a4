package main

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/plugins/oauth/discovery"
	"github.com/hermes-agent/hermes/plugins/oauth/tokenstore"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/sdktest"
)

// Every bad setting is a config error naming its key.
func TestSettingsErrorsNameTheKey(t *testing.T) {
	for key, v := range map[string]any{
		"client_id":     3.0,
		"redirect_port": 70000.0,
		"timeout":       -1.0,
		"extra_params":  "prompt=consent",
		"grant_type":    "password",
	} {
		_, err := parseSettings(map[string]any{key: v})
		if sdk.ErrorCode(err) != sdk.CodeConfig || !strings.Contains(err.Error(), "oauth."+key) {
			t.Errorf("%s=%v: error %v", key, v, err)
		}
	}
	_, err := parseSettings(map[string]any{"grant_type": "client_credentials", "client_id": "x"})
	if err == nil || !strings.Contains(err.Error(), "oauth.client_secret") {
		t.Errorf("client_credentials without a secret: %v", err)
	}
	s, err := parseSettings(map[string]any{"redirect_port": 8765.0, "timeout": 60.0, "extra_params": map[string]any{"prompt": "consent", "state": "evil"}})
	if err != nil || s.RedirectPort != 8765 || s.Timeout.Seconds() != 60 || s.ClientName != defaultClientName {
		t.Fatalf("settings = %+v, %v", s, err)
	}
	// extra_params cannot replace the parameters that carry the flow's
	// security.
	if names := s.extraParamNames(); len(names) != 1 || names[0] != "prompt" {
		t.Fatalf("extra params used = %v", names)
	}
}

func TestParsePasted(t *testing.T) {
	for _, in := range []string{
		"http://127.0.0.1:5555/callback?code=abc&state=xyz",
		"  ?code=abc&state=xyz\n",
		"code=abc&state=xyz",
		"https://provider.example/done?code=abc&state=xyz#frag",
	} {
		r := parsePasted(in)
		if r.err != nil || r.query.Get("code") != "abc" || r.query.Get("state") != "xyz" {
			t.Errorf("%q: %+v", in, r)
		}
	}
	for _, in := range []string{"skip", "Q", ""} {
		if r := parsePasted(in); !errors.Is(r.err, errLoginCancelled) {
			t.Errorf("%q: not a cancel: %+v", in, r)
		}
	}
	if r := parsePasted("hello world"); r.err == nil || !strings.Contains(r.err.Error(), "callback?code=") {
		t.Errorf("garbage: %+v", r)
	}
	// An error redirect is passed on (the flow reports the provider's error).
	if r := parsePasted("?error=access_denied&state=x"); r.err != nil || r.query.Get("error") != "access_denied" {
		t.Errorf("error redirect: %+v", r)
	}
}

// FuzzParsePasted: whatever is pasted, no panic, and a result is either an
// error or carries a code or an error parameter.
func FuzzParsePasted(f *testing.F) {
	for _, s := range []string{"code=a&state=b", "http://127.0.0.1:1/callback?code=%zz", "?#", "skip", "\x00code=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := parsePasted(s)
		if r.err == nil && r.query.Get("code") == "" && r.query.Get("error") == "" {
			t.Fatalf("%q accepted without code or error", s)
		}
	})
}

// tokenServer answers token requests and records how the client
// authenticated.
func tokenServer(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(answer))
	t.Cleanup(ts.Close)
	return ts
}

// The three client authentication methods put the credentials where the
// server expects them, and "none" never sends a secret.
func TestTokenRequestClientAuth(t *testing.T) {
	var got *http.Request
	var form url.Values
	ts := tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
		got = r
		_ = r.ParseForm()
		form = r.PostForm
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"at","token_type":"bearer","expires_in":3600,"refresh_token":"rt","scope":"a b"}`)
	})
	ctx := context.Background()
	base := url.Values{"grant_type": {"authorization_code"}, "code": {"c"}}

	tok, err := tokenRequest(ctx, ts.Client(), ts.URL, client{ID: "id:1", Secret: "s&2", AuthMethod: discovery.AuthClientSecretBasic}, base, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("id%3A1:s%262"))
	if got.Header.Get("Authorization") != want || form.Has("client_secret") {
		t.Errorf("basic: Authorization %q, form %v", got.Header.Get("Authorization"), form)
	}
	if tok.AccessToken != "at" || tok.RefreshToken != "rt" || tok.ExpiresIn != 3600 || tok.ExpiresAt == 0 || tok.TokenType != "Bearer" {
		t.Errorf("token = %+v", tok)
	}

	if _, err := tokenRequest(ctx, ts.Client(), ts.URL, client{ID: "id", Secret: "sec", AuthMethod: discovery.AuthClientSecretPost}, base, nil); err != nil {
		t.Fatal(err)
	}
	if got.Header.Get("Authorization") != "" || form.Get("client_id") != "id" || form.Get("client_secret") != "sec" {
		t.Errorf("post: form %v", form)
	}

	if _, err := tokenRequest(ctx, ts.Client(), ts.URL, client{ID: "id", Secret: "sec", AuthMethod: discovery.AuthNone}, base, nil); err != nil {
		t.Fatal(err)
	}
	if got.Header.Get("Authorization") != "" || form.Has("client_secret") || form.Get("client_id") != "id" {
		t.Errorf("none: form %v", form)
	}
	if base.Has("client_id") {
		t.Error("tokenRequest changed the caller's form")
	}
}

// Refusals keep the OAuth error code (which decides "log in again" or
// "register again") and never echo the request.
func TestTokenRequestRefusals(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		status int
		ctype  string
		body   string
		code   string
		want   string
	}{
		"invalid_grant":    {400, "application/json", `{"error":"invalid_grant","error_description":"grant revoked\n\u001b[31m"}`, "invalid_grant", "grant revoked"},
		"invalid_client":   {401, "application/json", `{"error":"invalid_client"}`, "invalid_client", "HTTP 401"},
		"html":             {200, "text/html", `<html>`, "", "not JSON"},
		"no access token":  {200, "application/json", `{"token_type":"Bearer"}`, "", "no access_token"},
		"header injection": {200, "application/json", `{"access_token":"a\r\nX-Evil: 1"}`, "", "cannot go into an HTTP header"},
		"not bearer":       {200, "application/json", `{"access_token":"a","token_type":"DPoP"}`, "", "Bearer tokens only"},
		"too large":        {200, "application/json", `{"access_token":"` + strings.Repeat("a", maxTokenResponse) + `"}`, "", "1 MiB"},
	} {
		t.Run(name, func(t *testing.T) {
			ts := tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			_, err := tokenRequest(ctx, ts.Client(), ts.URL, client{ID: "id", Secret: "topsecret", AuthMethod: discovery.AuthClientSecretPost}, url.Values{"code": {"thecode"}}, nil)
			if err == nil {
				t.Fatal("accepted")
			}
			if oauthCode(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q (code %q)", err, oauthCode(err))
			}
			for _, secret := range []string{"topsecret", "thecode", "\x1b"} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error %q shows %q", err, secret)
				}
			}
		})
	}
}

// The loopback listener passes on only a GET of /callback with the login's
// state, once; anything else is a plain 400 that repeats nothing, and the
// maxBadCallbacks-th of those ends the login with a clear error.
func TestCallbackHandler(t *testing.T) {
	results := make(chan callback, 2)
	ts := httptest.NewServer(newCallbackHandler("the-state", results))
	defer ts.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	for _, path := range []string{
		"/callback?error=%3Cscript%3E&state=wrong",
		"/callback?error=access_denied",
		"/callback?code=c",
		"/callback?code=c&state=the-stat",
		"/callback?code=c&state=the-state&state=the-state",
		"/other?code=c&state=the-state",
		"/?state=the-state",
	} {
		status, body := get(path)
		if status != http.StatusBadRequest || strings.Contains(body, "script") || strings.Contains(body, "access_denied") || strings.Contains(body, "the-state") {
			t.Errorf("%s: HTTP %d %q", path, status, body)
		}
	}
	select {
	case r := <-results:
		t.Fatalf("a forged request went through: %+v", r)
	default:
	}
	status, body := get("/callback?code=c&state=the-state")
	if status != http.StatusOK || !strings.Contains(body, "Authorization Successful") {
		t.Fatalf("the redirect: HTTP %d %s", status, body)
	}
	if r := <-results; r.err != nil || r.query.Get("code") != "c" {
		t.Fatalf("result = %+v", r)
	}
	// A second hit of the redirect does not block, nor pass anything on.
	if status, _ := get("/callback?error=x&state=the-state"); status != http.StatusOK {
		t.Fatalf("second redirect: HTTP %d", status)
	}
	select {
	case r := <-results:
		t.Fatalf("second redirect passed on: %+v", r)
	default:
	}
}

// maxBadCallbacks requests that are not the redirect end the login with
// errTooManyBadCallbacks; fewer leave it waiting.
func TestCallbackHandlerBound(t *testing.T) {
	results := make(chan callback, 2)
	ts := httptest.NewServer(newCallbackHandler("the-state", results))
	defer ts.Close()
	for i := range maxBadCallbacks + 5 {
		if i == maxBadCallbacks-1 {
			select {
			case r := <-results:
				t.Fatalf("ended after %d bad requests: %+v", i, r)
			default:
			}
		}
		resp, err := http.Get(ts.URL + "/callback?code=c&state=forged")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	r := <-results
	if !errors.Is(r.err, errTooManyBadCallbacks) || !strings.Contains(r.err.Error(), "100 requests that were not this login's redirect") {
		t.Fatalf("result = %+v", r)
	}
}

func TestAccountOf(t *testing.T) {
	part := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	if got := accountOf("h." + part(`{"sub":"123","email":"alice@example.com"}`) + ".sig"); got != "alice@example.com" {
		t.Errorf("email: %q", got)
	}
	if got := accountOf("h." + part(`{"sub":"u\u001b[31m1"}`) + ".sig"); got != "u[31m1" {
		t.Errorf("sub with control characters: %q", got)
	}
	for _, bad := range []string{"", "a.b", "a.!!!.c", "h." + part("[1]") + ".s"} {
		if got := accountOf(bad); got != "" {
			t.Errorf("%q: %q", bad, got)
		}
	}
}

// The refresh margin is a tenth of the token's lifetime, at most 60 s: a
// short-lived token is used for most of its life, never refreshed the
// moment it arrives.
func TestRefreshMargin(t *testing.T) {
	for _, tc := range []struct {
		name string
		tok  *tokenstore.Token
		want time.Duration
	}{
		{"an hour", &tokenstore.Token{ExpiresIn: 3600}, 60 * time.Second},
		{"ten minutes", &tokenstore.Token{ExpiresIn: 600}, 60 * time.Second},
		{"five minutes", &tokenstore.Token{ExpiresIn: 300}, 30 * time.Second},
		{"60 s", &tokenstore.Token{ExpiresIn: 60}, 6 * time.Second},
		{"30 s", &tokenstore.Token{ExpiresIn: 30}, 3 * time.Second},
		{"5 s", &tokenstore.Token{ExpiresIn: 5}, 500 * time.Millisecond},
		{"hostile expires_in", &tokenstore.Token{ExpiresIn: 1 << 62}, 60 * time.Second},
		{"unknown", &tokenstore.Token{}, 60 * time.Second},
		{"nil", nil, 60 * time.Second},
		{"from the last refresh", &tokenstore.Token{ObtainedAt: 1000, LastRefresh: 2000, ExpiresAt: 2040}, 4 * time.Second},
		{"from the login", &tokenstore.Token{ObtainedAt: 1000, ExpiresAt: 1020}, 2 * time.Second},
	} {
		if got := refreshMargin(tc.tok); got != tc.want {
			t.Errorf("%s: margin %s, want %s", tc.name, got, tc.want)
		}
	}
	now := time.Now()
	fresh := &tokenstore.Token{AccessToken: "a", ExpiresIn: 60, ExpiresAt: now.Unix() + 60}
	if needsRefresh(fresh, now) {
		t.Error("a 60 s token needs a refresh the moment it arrives")
	}
	if !needsRefresh(fresh, now.Add(55*time.Second)) {
		t.Error("a 60 s token 5 s before its expiry does not need a refresh")
	}
}

// expires_at counts from when the request left (the server issued the
// token after that), and a hostile expires_in cannot wrap it into the past.
func TestTokenRequestExpiry(t *testing.T) {
	// The request leaves at a fixed time an hour ago; the server's answer
	// moves the clock on to now, as a slow answer would: counted from the
	// answer, expires_at would be an hour later than from the request.
	start := time.Now().Add(-time.Hour).Unix()
	var fake atomic.Int64
	clock = func() time.Time { return time.Unix(fake.Load(), 0) }
	t.Cleanup(func() { clock = time.Now })
	for _, tc := range []struct {
		expiresIn string
		want      int64
	}{{"60", 60}, {"1e300", maxExpiresIn}, {"9223372036854775807", maxExpiresIn}, {"30.5", 30}} {
		fake.Store(start)
		ts := tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
			fake.Store(time.Now().Unix())
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"at","token_type":"bearer","expires_in":`+tc.expiresIn+`}`)
		})
		tok, err := tokenRequest(context.Background(), ts.Client(), ts.URL, client{ID: "id"}, url.Values{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tok.ExpiresIn != tc.want || tok.ExpiresAt != start+tc.want {
			t.Errorf("expires_in %s: ExpiresIn %d ExpiresAt request%+d; want %d and request%+d", tc.expiresIn, tok.ExpiresIn, tok.ExpiresAt-start, tc.want, tc.want)
		}
	}
}

// The plugin keeps the auth contract as the sdk checks it, with nothing
// stored: empty headers, a Status naming the method, and a challenge
// without a user answered with login_needed at once.
func TestAuthContract(t *testing.T) {
	sdktest.CheckAuth(t, func(ctx context.Context, cfg auth.Config) (auth.Authenticator, error) {
		return open(ctx, cfg, hclog.NewNullLogger())
	}, auth.Config{Server: "notes", Method: "oauth", URL: "https://mcp.example/mcp", TokenDir: t.TempDir()})
}
