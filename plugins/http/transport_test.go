package main

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/sdk/mcpgo/pluginconn"
	"github.com/hermes-agent/hermes/sdk/mcpgo/reference"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/sdktest"
	"github.com/hermes-agent/hermes/sdk/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The tests here run the plugin's opener behind the real contract
// (in-process go-plugin, message stream, mcp-go's client on the host side)
// against in-process MCP servers, and check what the host sees; the unit
// tests of single pieces are beside the files they test.

func TestCallThroughPlugin(t *testing.T) {
	var mu sync.Mutex
	var posts []string
	ms := newMCPServer(t, serverOpts{wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				m, _ := peekMethod(r)
				mu.Lock()
				posts = append(posts, m)
				mu.Unlock()
			}
			next.ServeHTTP(w, r)
		})
	}})
	s := mustConnect(t, transport.Config{URL: ms.URL, Headers: map[string]string{"Authorization": "Bearer cfg-token"}}, pluginconn.DialOptions{})
	if got, err := s.call("echo", map[string]any{"message": "hi"}); err != nil || got != "hi" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	// Each message is its own exchange, yet the handshake ends before the
	// first request after it goes out.
	mu.Lock()
	order := strings.Join(posts, " ")
	mu.Unlock()
	if want := "initialize notifications/initialized tools/call"; order != want {
		t.Fatalf("the server saw %q, want %q", order, want)
	}
	if got, _ := s.call("auth", nil); got != "Bearer cfg-token" {
		t.Fatalf("the server saw Authorization %q", got)
	}
	if p := s.conn.Properties(); !p.HTTP || p.LegacyOnly {
		t.Fatalf("properties %+v", p)
	}
	if s.c.GetSessionId() == "" {
		t.Fatal("no session id")
	}
}

// TestSessionExpired: when the server no longer knows the session (HTTP
// 404), the plugin reports session_expired and leaves the new session to
// the host: it replays nothing, and the connection itself stays open.
func TestSessionExpired(t *testing.T) {
	ms := newMCPServer(t, serverOpts{})
	s := mustConnect(t, transport.Config{URL: ms.URL}, pluginconn.DialOptions{})
	if _, err := s.call("echo", map[string]any{"message": "1"}); err != nil {
		t.Fatal(err)
	}
	ms.sessions.forget()
	for i := 0; i < 2; i++ {
		_, err := s.call("echo", map[string]any{"message": "2"})
		if err == nil {
			t.Fatal("a call on a forgotten session succeeded")
		}
		se := sdkError(t, err)
		if se.Code != sdk.CodeSessionExpired || se.Status != http.StatusNotFound || !strings.Contains(se.Message, "no longer knows the session") {
			t.Fatalf("call %d: got %s/%d %q", i, se.Code, se.Status, se.Message)
		}
	}
	if n := ms.inits.Load(); n != 1 {
		t.Fatalf("the server saw %d initialize requests; the plugin must not re-initialise on its own", n)
	}
	if err := s.conn.Err(); err != nil {
		t.Fatalf("the connection ended: %v", err)
	}
}

// TestRequestTimeout: a request past cfg.Timeout fails with timeout, the
// server hears the request end, and the connection stays usable.
func TestRequestTimeout(t *testing.T) {
	ms := newMCPServer(t, serverOpts{})
	s := mustConnect(t, transport.Config{URL: ms.URL, Timeout: 300 * time.Millisecond}, pluginconn.DialOptions{})
	start := time.Now()
	_, err := s.call("sleep", map[string]any{"ms": 10000})
	if err == nil {
		t.Fatal("a call past the timeout succeeded")
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("the call took %s with a 300ms timeout", el)
	}
	se := sdkError(t, err)
	if se.Code != sdk.CodeTimeout || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(se.Message, "timeout in config.yaml") {
		t.Fatalf("got %s %q", se.Code, se.Message)
	}
	if got, err := s.call("echo", map[string]any{"message": "still"}); err != nil || got != "still" {
		t.Fatalf("echo after the timeout = %q, %v", got, err)
	}
}

func TestAuthRequired(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			challenge := `Bearer resource_metadata="https://example.com/.well-known/oauth-protected-resource"`
			ms := newMCPServer(t, serverOpts{wrap: func(http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("WWW-Authenticate", challenge)
					http.Error(w, "no", status)
				})
			}})
			_, err := connect(t, transport.Config{Server: "my.server", URL: ms.URL, Headers: map[string]string{"Authorization": "Bearer wrong-token-value"}}, pluginconn.DialOptions{})
			se := sdkError(t, err)
			if se.Code != sdk.CodeAuth || se.Status != status || se.WWWAuthenticate != challenge {
				t.Fatalf("got %s/%d %q: %s", se.Code, se.Status, se.WWWAuthenticate, se.Message)
			}
			if !strings.Contains(se.Message, "needs credentials") || !strings.Contains(se.Message, "MCP_MY_SERVER_API_KEY") || strings.Contains(se.Message, "wrong-token-value") {
				t.Fatalf("message %q", se.Message)
			}
		})
	}
}

// TestHTTPStatus: a status the transport cannot handle is reported with
// its code and the start of the body.
func TestHTTPStatus(t *testing.T) {
	ms := newMCPServer(t, serverOpts{wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				if m, _ := peekMethod(r); m == string(mcp.MethodToolsCall) {
					http.Error(w, "upstream down", http.StatusBadGateway)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}})
	s := mustConnect(t, transport.Config{URL: ms.URL}, pluginconn.DialOptions{})
	_, err := s.call("echo", map[string]any{"message": "x"})
	se := sdkError(t, err)
	if se.Code != sdk.CodeHTTP || se.Status != http.StatusBadGateway || !strings.Contains(se.Message, "HTTP 502 Bad Gateway: upstream down") {
		t.Fatalf("got %s/%d %q", se.Code, se.Status, se.Message)
	}
}

// TestConnectionRefused: a server that is not there is a closed connection,
// which the host answers with a reconnect.
func TestConnectionRefused(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL + "/mcp"
	ts.Close()
	_, err := connect(t, transport.Config{URL: url}, pluginconn.DialOptions{})
	if se := sdkError(t, err); se.Code != sdk.CodeClosed || !strings.Contains(se.Message, "cannot reach") {
		t.Fatalf("got %s %q", se.Code, se.Message)
	}
}

func TestNotMCP(t *testing.T) {
	page := func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, "<html></html>")
		})
	}
	ms := newMCPServer(t, serverOpts{wrap: page})
	for _, extra := range []map[string]any{nil, {"skip_preflight": true}} {
		_, err := connect(t, transport.Config{URL: ms.URL + "?key=hidden", Extra: extra}, pluginconn.DialOptions{})
		se := sdkError(t, err)
		if se.Code != sdk.CodeNotMCP || !strings.Contains(se.Message, "returned Content-Type 'text/html'") || strings.Contains(se.Message, "hidden") {
			t.Fatalf("extra %v: got %s %q", extra, se.Code, se.Message)
		}
	}
}

// TestHostHeaders: with DynamicHeaders the plugin asks the host before each
// request, with the request's method and URL.
func TestHostHeaders(t *testing.T) {
	ms := newMCPServer(t, serverOpts{})
	var mu sync.Mutex
	asked := map[string]int{}
	headers := func(_ context.Context, req transport.HeadersRequest) (map[string]string, error) {
		mu.Lock()
		defer mu.Unlock()
		if req.URL != ms.URL {
			return nil, fmt.Errorf("headers for %s", req.URL)
		}
		asked[req.Method]++
		return map[string]string{"Authorization": "Bearer from-host"}, nil
	}
	s := mustConnect(t, transport.Config{URL: ms.URL, DynamicHeaders: true}, pluginconn.DialOptions{TransportOptions: pluginhost.TransportOptions{Headers: headers}})
	if got, err := s.call("auth", nil); err != nil || got != "Bearer from-host" {
		t.Fatalf("the server saw Authorization %q (%v)", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked[http.MethodPost] < 3 {
		t.Fatalf("the host was asked %v", asked)
	}

	t.Run("refused", func(t *testing.T) {
		refuse := func(context.Context, transport.HeadersRequest) (map[string]string, error) {
			return nil, sdk.NewError(sdk.CodeAuth, "log in first: hermes mcp login srv")
		}
		_, err := connect(t, transport.Config{URL: ms.URL, DynamicHeaders: true}, pluginconn.DialOptions{TransportOptions: pluginhost.TransportOptions{Headers: refuse}})
		if se := sdkError(t, err); se.Code != sdk.CodeAuth || !strings.Contains(se.Message, "log in first") {
			t.Fatalf("got %s %q", se.Code, se.Message)
		}
	})
}

// TestRedirectToOtherOrigin: the configured Authorization never follows a
// redirect to another origin; the exchange itself works.
func TestRedirectToOtherOrigin(t *testing.T) {
	other := newMCPServer(t, serverOpts{})
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL, http.StatusTemporaryRedirect)
	}))
	defer home.Close()
	s := mustConnect(t, transport.Config{URL: home.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer must-not-leak"}}, pluginconn.DialOptions{})
	if got, err := s.call("auth", nil); err != nil || got != "" {
		t.Fatalf("the other origin saw Authorization %q (%v)", got, err)
	}
}

func TestTLS(t *testing.T) {
	ms := newMCPServer(t, serverOpts{tls: true})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ms.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("verified by default", func(t *testing.T) {
		_, err := connect(t, transport.Config{URL: ms.URL}, pluginconn.DialOptions{})
		if err == nil || !strings.Contains(err.Error(), "not trusted") || !strings.Contains(err.Error(), "ssl_verify") {
			t.Fatalf("want an untrusted certificate with a hint at ssl_verify, got %v", err)
		}
	})
	t.Run("ca bundle", func(t *testing.T) {
		s := mustConnect(t, transport.Config{URL: ms.URL, CABundle: ca}, pluginconn.DialOptions{})
		if _, err := s.call("echo", map[string]any{"message": "tls"}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("verification off", func(t *testing.T) {
		s := mustConnect(t, transport.Config{URL: ms.URL, InsecureSkipVerify: true}, pluginconn.DialOptions{})
		if _, err := s.call("echo", map[string]any{"message": "tls"}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("missing ca bundle", func(t *testing.T) {
		_, err := connect(t, transport.Config{URL: ms.URL, CABundle: filepath.Join(t.TempDir(), "nope.pem")}, pluginconn.DialOptions{})
		if se := sdkError(t, err); se.Code != sdk.CodeConfig || !strings.Contains(se.Message, "nope.pem") {
			t.Fatalf("got %s %q", se.Code, se.Message)
		}
	})
}

// TestSSE: the legacy transport works, and a lost event stream ends the
// connection at once with a reason.
func TestSSE(t *testing.T) {
	ms := newMCPServer(t, serverOpts{sse: true})
	s := mustConnect(t, transport.Config{Transport: "sse", URL: ms.URL, Headers: map[string]string{"Authorization": "Bearer sse-tok"}}, pluginconn.DialOptions{})
	if got, err := s.call("echo", map[string]any{"message": "over sse"}); err != nil || got != "over sse" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	if got, _ := s.call("auth", nil); got != "Bearer sse-tok" {
		t.Fatalf("the server saw Authorization %q", got)
	}
	ms.CloseClientConnections()
	select {
	case <-s.conn.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the host never heard that the SSE stream was lost")
	}
	if err := s.conn.Err(); sdk.ErrorCode(err) != sdk.CodeClosed || !strings.Contains(err.Error(), "SSE stream") {
		t.Fatalf("closed with %v", err)
	}
}

// TestContract runs the built plugin through the sdk's contract check, as
// the host runs it: a separate process, against the reference server.
func TestContract(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin")
	}
	bin := filepath.Join(t.TempDir(), "hermes-transport-http")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ts := httptest.NewServer(server.NewStreamableHTTPServer(reference.NewReferenceServer()))
	defer ts.Close()
	sdktest.CheckTransport(t, bin, transport.Config{Server: "reference", Transport: "http", URL: ts.URL + "/mcp",
		ConnectTimeout: 10 * time.Second, Timeout: 20 * time.Second})
}
