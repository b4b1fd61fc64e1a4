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
	"testing"

	"github.com/hermes-agent/hermes/plugins/oauth/discovery"
	"github.com/hermes-agent/hermes/sdk"
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

	tok, err := tokenRequest(ctx, ts.Client(), ts.URL, client{ID: "id:1", Secret: "s&2", AuthMethod: discovery.AuthClientSecretBasic}, base)
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

	if _, err := tokenRequest(ctx, ts.Client(), ts.URL, client{ID: "id", Secret: "sec", AuthMethod: discovery.AuthClientSecretPost}, base); err != nil {
		t.Fatal(err)
	}
	if got.Header.Get("Authorization") != "" || form.Get("client_id") != "id" || form.Get("client_secret") != "sec" {
		t.Errorf("post: form %v", form)
	}

	if _, err := tokenRequest(ctx, ts.Client(), ts.URL, client{ID: "id", Secret: "sec", AuthMethod: discovery.AuthNone}, base); err != nil {
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
			_, err := tokenRequest(ctx, ts.Client(), ts.URL, client{ID: "id", Secret: "topsecret", AuthMethod: discovery.AuthClientSecretPost}, url.Values{"code": {"thecode"}})
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

// The callback page answers once and passes the query on; a second hit
// does not block.
func TestCallbackHandler(t *testing.T) {
	results := make(chan callback, 1)
	ts := httptest.NewServer(callbackHandler(results))
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/callback?code=c&state=s")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "Authorization Successful") {
		t.Fatalf("page = %s", body)
	}
	resp, err = http.Get(ts.URL + "/callback?error=%3Cscript%3E")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "Authorization Failed") || strings.Contains(string(body), "<script>") {
		t.Fatalf("error page = %s", body)
	}
	if r := <-results; r.query.Get("code") != "c" {
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
