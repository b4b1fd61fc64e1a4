package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/mark3labs/mcp-go/client/transport"
)

func newTestTransport(t *testing.T, cfg sdk.TransportConfig) *httpTransport {
	t.Helper()
	if cfg.Server == "" {
		cfg.Server = "srv"
	}
	cfg.SSLVerify = true
	tr, err := newTransport(cfg, nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestPreflight(t *testing.T) {
	html := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<html></html>")
	}
	cases := []struct {
		name    string
		handler http.HandlerFunc
		notMCP  bool
	}{
		{"web page", func(w http.ResponseWriter, r *http.Request) { html(w) }, true},
		{"head not allowed, get is a page", func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			html(w)
		}, true},
		{"page on GET, MCP on POST", func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"_probe","result":{}}`)
				return
			}
			html(w)
		}, false},
		{"json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
		}, false},
		{"status 400", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", 400) }, false},
		{"no content type", func(w http.ResponseWriter, r *http.Request) { w.Header()["Content-Type"] = nil }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(c.handler)
			defer ts.Close()
			tr := newTestTransport(t, sdk.TransportConfig{URL: ts.URL + "/?api_key=hidden"})
			err := tr.preflight(context.Background())
			if c.notMCP {
				if sdk.ErrorCode(err) != sdk.CodeNotMCP {
					t.Fatalf("want not_mcp, got %v", err)
				}
				if !strings.Contains(err.Error(), "returned Content-Type 'text/html'") || strings.Contains(err.Error(), "hidden") {
					t.Fatalf("message %q", err)
				}
			} else if err != nil {
				t.Fatalf("preflight refused: %v", err)
			}
		})
	}
	t.Run("unreachable passes", func(t *testing.T) {
		ts := httptest.NewServer(http.NotFoundHandler())
		url := ts.URL
		ts.Close()
		tr := newTestTransport(t, sdk.TransportConfig{URL: url})
		if err := tr.preflight(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestPreflightWanted(t *testing.T) {
	for _, c := range []struct {
		cfg  sdk.TransportConfig
		want bool
	}{
		{sdk.TransportConfig{}, true},
		{sdk.TransportConfig{Transport: "sse"}, false},
		{sdk.TransportConfig{DynamicHeaders: true}, false},
		{sdk.TransportConfig{Extra: map[string]any{"skip_preflight": true}}, false},
		{sdk.TransportConfig{Extra: map[string]any{"skip_preflight": false}}, true},
		{sdk.TransportConfig{Extra: map[string]any{"skip_preflight": "yes"}}, false},
	} {
		c.cfg.URL = "http://127.0.0.1:1/mcp"
		if got := newTestTransport(t, c.cfg).preflightWanted(); got != c.want {
			t.Errorf("%+v: preflightWanted = %v", c.cfg, got)
		}
	}
}

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
	tr := newTestTransport(t, sdk.TransportConfig{URL: home.URL + "/mcp", Headers: headers})
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

func TestDynamicHeadersOnlyForOwnOrigin(t *testing.T) {
	var asked atomic.Int32
	host := sdk.HostFuncs{HeadersFunc: func(_ context.Context, req sdk.HeadersRequest) (map[string]string, error) {
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
	tr, err := newTransport(sdk.TransportConfig{Server: "s", URL: ts.URL + "/mcp", DynamicHeaders: true}, host, hclog.NewNullLogger())
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
	// An error from the host reaches the caller as it was.
	host.HeadersFunc = func(context.Context, sdk.HeadersRequest) (map[string]string, error) {
		return nil, sdk.NewError(sdk.CodeAuth, "log in first")
	}
	tr2, _ := newTransport(sdk.TransportConfig{Server: "s", URL: ts.URL + "/mcp", DynamicHeaders: true}, host, hclog.NewNullLogger())
	_, err = tr2.client.Post(ts.URL+"/mcp", "application/json", strings.NewReader("{}"))
	if sdk.ErrorCode(err) != sdk.CodeAuth {
		t.Fatalf("want the host's auth error, got %v", err)
	}
}

func TestTLSConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, c := range []struct {
		cfg  sdk.TransportConfig
		want []string
	}{
		{sdk.TransportConfig{CABundle: missing}, []string{"ssl_verify", "missing.pem", "does not exist"}},
		{sdk.TransportConfig{CABundle: bad}, []string{"ssl_verify", "no PEM certificate"}},
		{sdk.TransportConfig{ClientCert: missing}, []string{"client_cert", "missing.pem"}},
		{sdk.TransportConfig{ClientCert: bad, ClientKey: missing}, []string{"client_key", "missing.pem"}},
		{sdk.TransportConfig{ClientCert: bad}, []string{"client_cert", "cannot load"}},
		{sdk.TransportConfig{ClientKey: bad}, []string{"client_key", "without client_cert"}},
	} {
		c.cfg.Server = "s"
		c.cfg.SSLVerify = true
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
	tc, err := tlsConfig(sdk.TransportConfig{SSLVerify: false})
	if err != nil || !tc.InsecureSkipVerify {
		t.Fatalf("ssl_verify false: %v %v", tc, err)
	}
}

func TestBadURL(t *testing.T) {
	for _, u := range []string{"", "ftp://x/", "http://", "not a url"} {
		if _, err := newTransport(sdk.TransportConfig{Server: "s", URL: u}, nil, hclog.NewNullLogger()); sdk.ErrorCode(err) != sdk.CodeConfig {
			t.Errorf("url %q: %v", u, err)
		}
	}
}

func TestClassify(t *testing.T) {
	tr := newTestTransport(t, sdk.TransportConfig{Server: "my.server", URL: "http://127.0.0.1:9/mcp?token=abcd1234", Headers: map[string]string{"X-Key": "supersecretvalue"}})
	info := func(status int, challenge string) *respInfo {
		return &respInfo{status: status, challenge: challenge}
	}
	cases := []struct {
		err    error
		info   *respInfo
		code   string
		status int
		has    string
	}{
		{&transport.AuthorizationRequiredError{}, info(401, `Bearer realm="x"`), sdk.CodeAuth, 401, "${MCP_MY_SERVER_API_KEY}"},
		{errors.New("request failed with status 403: nope"), info(403, ""), sdk.CodeAuth, 403, "hermes mcp add my.server --url http://127.0.0.1:9/mcp --header"},
		{fmt.Errorf("failed to send request: %w", transport.ErrSessionTerminated), info(404, ""), sdk.CodeSessionExpired, 0, "no longer knows the session"},
		{errors.New("request failed with status 400: Invalid or expired session"), info(400, ""), sdk.CodeSessionExpired, 0, "session"},
		{errors.New("request failed with status 502: bad gateway supersecretvalue"), info(502, ""), sdk.CodeHTTP, 502, "HTTP 502"},
		{transport.ErrLegacySSEServer, info(405, ""), sdk.CodeHTTP, 405, "transport: sse"},
		{errors.New("unexpected content type: text/html"), &respInfo{status: 200, contentType: "text/html"}, sdk.CodeNotMCP, 0, "text/html"},
		{fmt.Errorf("Post \"http://127.0.0.1:9/mcp?token=abcd1234\": %w", &netErr{}), nil, sdk.CodeClosed, 0, "cannot reach"},
		{context.DeadlineExceeded, nil, sdk.CodeCanceled, 0, "timed out"},
	}
	for _, c := range cases {
		err := tr.classify(c.err, c.info, "tools/call")
		var se *sdk.Error
		if !errors.As(err, &se) {
			t.Fatalf("%v: not an sdk.Error", c.err)
		}
		if se.Code != c.code || se.Status != c.status || !strings.Contains(se.Message, c.has) {
			t.Errorf("%v: got %s/%d %q", c.err, se.Code, se.Status, se.Message)
		}
		for _, secret := range []string{"abcd1234", "supersecretvalue"} {
			if strings.Contains(se.Message, secret) {
				t.Errorf("%q leaks %s", se.Message, secret)
			}
		}
	}
}

// netErr is a connection refused as the net package reports it.
type netErr struct{}

func (*netErr) Error() string   { return "dial tcp 127.0.0.1:9: connect: connection refused" }
func (*netErr) Timeout() bool   { return false }
func (*netErr) Temporary() bool { return false }
func (*netErr) Unwrap() error   { return io.EOF }

func TestLogsScrubbed(t *testing.T) {
	var buf strings.Builder
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Trace})
	tr, err := newTransport(sdk.TransportConfig{Server: "s", URL: "http://127.0.0.1:9/mcp?token=abcd1234",
		Headers: map[string]string{"Authorization": "Bearer s3cr3t-value"}}, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	l := newSlogger(tr.log, tr.scrub)
	l.Error("failed to send request to http://127.0.0.1:9/mcp?token=abcd1234", "err", errors.New("token s3cr3t-value refused"), "url", "http://127.0.0.1:9/mcp?token=abcd1234")
	out := buf.String()
	if out == "" || strings.Contains(out, "abcd1234") || strings.Contains(out, "s3cr3t-value") {
		t.Fatalf("log line %q", out)
	}
}
