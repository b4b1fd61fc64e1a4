package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// TestRedirectKeepsCredentialsHome: credentials follow a redirect on the
// same origin and are dropped on a redirect to another port.
func TestRedirectKeepsCredentialsHome(t *testing.T) {
	var seen atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Header.Get("Authorization") + "|" + r.Header.Get("X-Api-Key") + "|" + r.Header.Get("X-Plain"))
	}))
	defer other.Close()
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
		case "/stay":
			http.Redirect(w, r, "/here", http.StatusTemporaryRedirect)
		default:
			seen.Store(r.Header.Get("Authorization") + "|" + r.Header.Get("X-Api-Key") + "|" + r.Header.Get("X-Plain"))
		}
	}))
	defer home.Close()
	headers := map[string]string{"Authorization": "Bearer s3cret", "X-Api-Key": "k3y", "X-Plain": "p"}
	tr := newTestTransport(t, transport.Config{URL: home.URL + "/mcp", Headers: headers})
	get := func(path string) string {
		req, _ := http.NewRequest(http.MethodGet, home.URL+path, nil)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := tr.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return seen.Load().(string)
	}
	if got := get("/stay"); got != "Bearer s3cret|k3y|p" {
		t.Fatalf("same origin saw %q", got)
	}
	if got := get("/away"); got != "||p" {
		t.Fatalf("other origin saw %q", got)
	}
}

// TestDynamicHeadersOnlyForOwnOrigin: the host's headers go to the server's
// own origin only, and an error from the host reaches the caller as it was.
func TestDynamicHeadersOnlyForOwnOrigin(t *testing.T) {
	var asked atomic.Int32
	host := &fakeHost{headers: func(_ context.Context, req transport.HeadersRequest) (map[string]string, error) {
		asked.Add(1)
		if req.Method != http.MethodPost {
			return nil, fmt.Errorf("method %q", req.Method)
		}
		return map[string]string{"Authorization": "Bearer from-host"}, nil
	}}
	var got atomic.Value
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
	}))
	defer ts.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
	}))
	defer other.Close()
	tr, err := newTransport(transport.Config{Server: "s", URL: ts.URL + "/mcp", DynamicHeaders: true}, host, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.client.Post(ts.URL+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Load() != "Bearer from-host" || asked.Load() != 1 {
		t.Fatalf("server saw %v after %d questions", got.Load(), asked.Load())
	}
	resp, err = tr.client.Post(other.URL+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Load() != "" || asked.Load() != 1 {
		t.Fatalf("another origin saw %v after %d questions", got.Load(), asked.Load())
	}
	host.headers = func(context.Context, transport.HeadersRequest) (map[string]string, error) {
		return nil, sdk.NewError(sdk.CodeAuth, "log in first")
	}
	_, err = tr.client.Post(ts.URL+"/mcp", "application/json", strings.NewReader("{}"))
	if sdk.ErrorCode(err) != sdk.CodeAuth {
		t.Fatalf("want the host's auth error, got %v", err)
	}
}

func TestTLSConfig(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, c := range []struct {
		cfg  transport.Config
		want []string
	}{
		{transport.Config{CABundle: missing}, []string{"ssl_verify", "missing.pem", "does not exist"}},
		{transport.Config{CABundle: bad}, []string{"ssl_verify", "no PEM certificate"}},
		{transport.Config{ClientCert: missing}, []string{"client_cert", "missing.pem"}},
		{transport.Config{ClientCert: bad, ClientKey: missing}, []string{"client_key", "missing.pem"}},
		{transport.Config{ClientCert: bad}, []string{"client_cert", "cannot load"}},
		{transport.Config{ClientKey: bad}, []string{"client_key", "without client_cert"}},
	} {
		c.cfg.Server = "s"
		_, err := tlsConfig(c.cfg)
		if sdk.ErrorCode(err) != sdk.CodeConfig {
			t.Fatalf("%+v: want a config error, got %v", c.cfg, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q lacks %q", err, w)
			}
		}
	}
	if tc, err := tlsConfig(transport.Config{}); err != nil || tc.InsecureSkipVerify {
		t.Fatalf("the zero Config must verify certificates: %v %v", tc, err)
	}
	if tc, err := tlsConfig(transport.Config{InsecureSkipVerify: true}); err != nil || !tc.InsecureSkipVerify {
		t.Fatalf("ssl_verify false: %v %v", tc, err)
	}
}

// TestChallengesGoToTheHost: a 401, or a 403 asking for more scope, to a
// request made with the host's headers goes to the host (with the response's
// DPoP-Nonce, for the auth side); when the host has
// new credentials the request is sent again, body and all, with fresh
// headers; a server that keeps refusing is retried at most
// MaxChallengeRetries times; the host's error stands for the request.
func TestChallengesGoToTheHost(t *testing.T) {
	var token atomic.Int32 // the token generation the host hands out
	var challenges []transport.ChallengeRequest
	var mu sync.Mutex
	retry := true
	var headerCalls atomic.Int32 // cross-process Headers calls
	host := &fakeHost{
		headers: func(context.Context, transport.HeadersRequest) (map[string]string, error) {
			headerCalls.Add(1)
			return map[string]string{"Authorization": fmt.Sprintf("Bearer t%d", token.Load())}, nil
		},
		challenge: func(_ context.Context, c transport.ChallengeRequest) (transport.ChallengeAnswer, error) {
			mu.Lock()
			challenges = append(challenges, c)
			r := retry
			mu.Unlock()
			if !r {
				return transport.ChallengeAnswer{}, sdk.NewError(sdk.CodeLoginNeeded, "MCP server 's' needs a login: no token is stored; run: hermes mcp login s")
			}
			// The answer carries the new headers: the retry needs no
			// Headers call.
			return transport.ChallengeAnswer{Retry: true, Headers: map[string]string{"Authorization": fmt.Sprintf("Bearer t%d", token.Add(1))}}, nil
		},
	}
	want := "Bearer t1" // the server accepts this token only
	var bodies []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		switch {
		case r.URL.Path == "/scope":
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="a b"`)
			w.WriteHeader(http.StatusForbidden)
		case r.URL.Path == "/forbidden":
			w.WriteHeader(http.StatusForbidden)
		case r.Header.Get("Authorization") != want:
			w.Header().Add("WWW-Authenticate", `Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"`)
			w.Header().Add("WWW-Authenticate", `Basic realm="x"`)
			w.Header().Set("DPoP-Nonce", "rs-nonce-1")
			w.WriteHeader(http.StatusUnauthorized)
		default:
			w.WriteHeader(http.StatusOK)
		}
	}))
	defer ts.Close()
	tr, err := newTransport(transport.Config{Server: "s", URL: ts.URL + "/mcp", DynamicHeaders: true}, host, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	post := func(path string) int {
		t.Helper()
		resp, err := tr.client.Post(ts.URL+path, "application/json", strings.NewReader(`{"id":1}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post("/mcp"); got != http.StatusOK {
		t.Fatalf("after a refresh the server answered %d", got)
	}
	if len(challenges) != 1 || challenges[0].Status != 401 || len(challenges[0].WWWAuthenticate) != 2 || challenges[0].Attempt != 1 ||
		challenges[0].DPoPNonce != "rs-nonce-1" {
		t.Fatalf("challenges = %+v", challenges)
	}
	// One refresh is one round trip from the plugin: the first request's
	// Headers, then one Challenge whose answer carries the new headers.
	if n := headerCalls.Load(); n != 1 {
		t.Fatalf("a refresh cost %d Headers calls besides the Challenge, want 1 in all (the first request's)", n)
	}
	mu.Lock()
	got := slices.Clone(bodies)
	mu.Unlock()
	if len(got) != 2 || got[1] != `{"id":1}` {
		t.Fatalf("the retry did not carry the body: %q", got)
	}

	// A server that asks for scope forever gets MaxChallengeRetries tries.
	challenges = nil
	if got := post("/scope"); got != http.StatusForbidden {
		t.Fatalf("status %d", got)
	}
	if len(challenges) != transport.MaxChallengeRetries || challenges[2].Attempt != 3 {
		t.Fatalf("challenges = %+v", challenges)
	}

	// A plain 403 is no challenge.
	challenges = nil
	if got := post("/forbidden"); got != http.StatusForbidden || len(challenges) != 0 {
		t.Fatalf("plain 403: status %d, %d challenges", got, len(challenges))
	}

	// The host's error is what the exchange reports.
	retry = false
	want = "never"
	ctx, info := withInfo(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp", strings.NewReader("{}"))
	resp, err := tr.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if e := info.hostAuthError(); e == nil || e.Code != sdk.CodeLoginNeeded || !strings.Contains(e.Message, "hermes mcp login s") {
		t.Fatalf("recorded error = %v", e)
	}
}
