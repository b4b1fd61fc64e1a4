package session_test

import (
	"context"
	"errors"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/session"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// revisions are the two eras every revision-sensitive test runs in: the
// stateless current one and the newest with the initialize handshake.
var revisions = []string{session.Latest, mcp.LATEST_LEGACY_PROTOCOL_VERSION}

// at pins srv to revision rev.
func at(srv *config.Server, rev string) *config.Server {
	srv.Protocol = rev
	return srv
}

func TestHTTPToolsAndCall(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	p := startTestServer(t, dir, "--http", "127.0.0.1:0")
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			srv := at(remote("http", p.URL+"/mcp"), rev)
			srv.Headers = map[string]string{"Authorization": "Bearer tok-123", "X-Extra": "1"}
			s := mustConnect(t, srv, d)
			if s.Init.ServerInfo.Name != "hermes-testserver" {
				t.Fatalf("server name %q", s.Init.ServerInfo.Name)
			}
			if s.Init.ProtocolVersion != rev || s.Protocol.Source != session.SourcePinned {
				t.Fatalf("protocol %q (%+v), want %s pinned", s.Init.ProtocolVersion, s.Protocol, rev)
			}
			tools, err := s.Client.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(tools.Tools) < 10 {
				t.Fatalf("only %d tools", len(tools.Tools))
			}
			if got := callText(t, s, "echo", map[string]any{"message": "hi there"}); got != "hi there" {
				t.Fatalf("echo = %q", got)
			}
			if got := callText(t, s, "last_auth_header", nil); got != "Bearer tok-123" {
				t.Fatalf("Authorization seen by the server = %q", got)
			}
			// Sessions exist only before 2026-07-28.
			if id := s.Client.GetSessionId(); (id == "") != mcp.IsModernProtocol(rev) {
				t.Fatalf("session id %q on %s", id, rev)
			}
		})
	}
}

// TestHTTPServerRestart kills the server between two calls and starts it
// again on the same port. The test server does not track sessions (mcp-go's
// default), so the new one accepts the old session id and the connection
// carries on, on the new server. A server that does forget sessions answers
// 404: see TestHTTPSessionTTL.
func TestHTTPServerRestart(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	addr := "127.0.0.1:" + itoa(freePort(t))
	p := startTestServer(t, dir, "--http", addr)
	s := mustConnect(t, remote("http", p.URL+"/mcp"), d)
	pid1 := callText(t, s, "pid", nil)
	p.stop()
	startTestServer(t, dir, "--http", addr)
	pid2 := callText(t, s, "pid", nil)
	if pid1 == pid2 {
		t.Fatalf("same server pid %s after restart", pid1)
	}
	if got := callText(t, s, "echo", map[string]any{"message": "again"}); got != "again" {
		t.Fatalf("echo after restart = %q", got)
	}
}

// TestHTTPServerDown: a call while the server is gone fails as a closed
// connection, so the host reconnects.
func TestHTTPServerDown(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	p := startTestServer(t, dir, "--http", "127.0.0.1:0")
	s := mustConnect(t, remote("http", p.URL+"/mcp"), d)
	p.stop()
	_, err := callTool(s, "echo", map[string]any{"message": "x"})
	if err == nil {
		t.Fatal("call to a stopped server succeeded")
	}
	if se := sdkErr(t, err); se.Code != sdk.CodeClosed {
		t.Fatalf("code %q: %v", se.Code, err)
	}
}

// TestHTTPSessionTTL: the server ends its sessions (the expire_sessions
// tool of --session-ttl, so the test orders the expiry instead of sleeping
// past a TTL). The plugin reports each expired session as session_expired
// (and keeps reporting it: a new session is the host's to start); through
// the registry every call succeeds on a new session.
func TestHTTPSessionTTL(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	p := startTestServer(t, dir, "--http", "127.0.0.1:0", "--session-ttl", "600000")
	// Sessions exist only before 2026-07-28.
	legacy := func() *config.Server { return at(remote("http", p.URL+"/mcp"), mcp.LATEST_LEGACY_PROTOCOL_VERSION) }
	t.Run("plugin", func(t *testing.T) {
		s := mustConnect(t, legacy(), d)
		first := s.Client.GetSessionId()
		callText(t, s, "echo", map[string]any{"message": "1"})
		callText(t, s, "expire_sessions", nil)
		for i := 0; i < 2; i++ {
			_, err := callTool(s, "echo", map[string]any{"message": "after expiry"})
			wantSessionExpired(t, err)
		}
		if id := s.Client.GetSessionId(); id == first {
			t.Fatalf("the plugin still reports the expired session %q", id)
		}
	})
	t.Run("registry", func(t *testing.T) {
		m, logs := startRegistry(t, legacy(), d)
		for i := 0; i < 2; i++ {
			registryCall(t, m, "ts", "expire_sessions", nil)
			if got := registryCall(t, m, "ts", "echo", map[string]any{"message": "after expiry"}); got != "after expiry" {
				t.Fatalf("echo = %q", got)
			}
		}
		if n := strings.Count(logs.String(), "session expired; reconnecting and retrying once"); n < 2 {
			t.Fatalf("the registry reconnected %d times for 2 expired sessions:\n%s", n, logs.String())
		}
	})
}

func TestHTTPStatus500(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	// The call is POST 2 in the current revision (after server/discover),
	// POST 3 before it (after initialize and notifications/initialized).
	for _, c := range []struct{ rev, nth string }{{session.Latest, "2:500"}, {mcp.LATEST_LEGACY_PROTOCOL_VERSION, "3:500"}} {
		t.Run(c.rev, func(t *testing.T) {
			p := startTestServer(t, dir, "--http", "127.0.0.1:0", "--status-on", c.nth)
			s := mustConnect(t, at(remote("http", p.URL+"/mcp"), c.rev), d)
			_, err := callTool(s, "echo", map[string]any{"message": "x"})
			if err == nil {
				t.Fatal("call succeeded")
			}
			se := sdkErr(t, err)
			if se.Code != sdk.CodeHTTP || se.Status != 500 {
				t.Fatalf("code %q status %d: %v", se.Code, se.Status, err)
			}
			if !strings.Contains(se.Message, "HTTP 500") {
				t.Fatalf("message %q", se.Message)
			}
		})
	}
}

func TestHTTPCallTimeout(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	p := startTestServer(t, dir, "--http", "127.0.0.1:0")
	srv := remote("http", p.URL+"/mcp")
	srv.Timeout = time.Second
	s := mustConnect(t, srv, d)
	// The sleep outlasts the timeout on any machine: the timeout's code
	// below says the bound ended the call.
	_, err := callTool(s, "sleep", map[string]any{"ms": 10000})
	if err == nil {
		t.Fatal("sleep past the timeout succeeded")
	}
	if se := sdkErr(t, err); se.Code != sdk.CodeTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("code %q: %v", se.Code, err)
	}
	if got := callText(t, s, "echo", map[string]any{"message": "still there"}); got != "still there" {
		t.Fatalf("echo after timeout = %q", got)
	}
	// The dropped request cancels the sleep on the server.
	testwait.For(t, 5*time.Second, "the server to see the call cancelled", func() bool {
		return callText(t, s, "cancelled_count", nil) != "0"
	})
}

func TestHTTPStreamCut(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	p := startTestServer(t, dir, "--http", "127.0.0.1:0", "--cut-stream")
	srv := remote("http", p.URL+"/mcp")
	// A bound no machine reaches: the call ends on the cut, and says so
	// (not a timeout), however slow the machine.
	srv.Timeout = time.Hour
	s := mustConnect(t, srv, d)
	_, err := callTool(s, "slow_stream", map[string]any{"steps": 5, "interval_ms": 100})
	if err == nil {
		t.Fatal("a cut stream returned a result")
	}
	var se *sdk.Error
	if errors.As(err, &se) && se.Code == sdk.CodeTimeout {
		t.Fatalf("cut stream not noticed, the call timed out: %v", err)
	}
	t.Logf("cut stream: %v", err)
	if got := callText(t, s, "echo", map[string]any{"message": "next"}); got != "next" {
		t.Fatalf("echo after cut = %q", got)
	}
}

// TestHTTPRedirectOtherOrigin: a redirect to another port is another
// origin, and the Authorization header must not follow it.
func TestHTTPRedirectOtherOrigin(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	b := startTestServer(t, dir, "--http", "127.0.0.1:0")
	a := startTestServer(t, dir, "--http", "127.0.0.1:0", "--redirect-to", b.URL+"/mcp")
	srv := remote("http", a.URL+"/mcp")
	srv.Headers = map[string]string{"Authorization": "Bearer must-not-leak"}
	s := mustConnect(t, srv, d)
	if got := callText(t, s, "last_auth_header", nil); got != "" {
		t.Fatalf("the other origin received Authorization %q", got)
	}
	if got := callText(t, s, "echo", map[string]any{"message": "via redirect"}); got != "via redirect" {
		t.Fatalf("echo = %q", got)
	}
}

func TestHTTPTLS(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	ca, cert, key, _, _, err := testserver.GenerateTLS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := startTestServer(t, dir, "--http", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(p.URL, "https://") {
		t.Fatalf("url %s", p.URL)
	}
	t.Run("ca bundle", func(t *testing.T) {
		srv := remote("http", p.URL+"/mcp")
		srv.CABundle = ca
		s := mustConnect(t, srv, d)
		callText(t, s, "echo", map[string]any{"message": "tls"})
	})
	t.Run("untrusted", func(t *testing.T) {
		_, err := connectOnce(remote("http", p.URL+"/mcp"), d)
		if err == nil || !strings.Contains(err.Error(), "ssl_verify") {
			t.Fatalf("want a hint at ssl_verify, got %v", err)
		}
	})
	t.Run("verify off", func(t *testing.T) {
		srv := remote("http", p.URL+"/mcp")
		srv.SSLVerify = false
		s := mustConnect(t, srv, d)
		callText(t, s, "echo", map[string]any{"message": "tls"})
	})
	t.Run("missing ca file", func(t *testing.T) {
		srv := remote("http", p.URL+"/mcp")
		srv.CABundle = filepath.Join(t.TempDir(), "nope.pem")
		_, err := connectOnce(srv, d)
		// A config error comes from the plugin before any connection.
		if se := sdkErr(t, err); se.Code != sdk.CodeConfig || !strings.Contains(se.Message, "ssl_verify") || !strings.Contains(se.Message, "nope.pem") {
			t.Fatalf("code %q: %v", se.Code, err)
		}
	})
}

func TestHTTPMutualTLS(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	tmp := t.TempDir()
	ca, cert, key, ccert, ckey, err := testserver.GenerateTLS(tmp)
	if err != nil {
		t.Fatal(err)
	}
	p := startTestServer(t, dir, "--http", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--client-ca", ca)
	t.Run("client cert", func(t *testing.T) {
		srv := remote("http", p.URL+"/mcp")
		srv.CABundle, srv.ClientCert, srv.ClientKey = ca, ccert, ckey
		s := mustConnect(t, srv, d)
		callText(t, s, "echo", map[string]any{"message": "mtls"})
	})
	t.Run("combined pem", func(t *testing.T) {
		combined := filepath.Join(tmp, "combined.pem")
		writeConcat(t, combined, ccert, ckey)
		srv := remote("http", p.URL+"/mcp")
		srv.CABundle, srv.ClientCert = ca, combined
		s := mustConnect(t, srv, d)
		callText(t, s, "echo", map[string]any{"message": "mtls"})
	})
	t.Run("no client cert", func(t *testing.T) {
		srv := remote("http", p.URL+"/mcp")
		srv.CABundle = ca
		if _, err := connectOnce(srv, d); err == nil {
			t.Fatal("connected without a client certificate")
		}
	})
	t.Run("missing key file", func(t *testing.T) {
		srv := remote("http", p.URL+"/mcp")
		srv.CABundle, srv.ClientCert, srv.ClientKey = ca, ccert, filepath.Join(tmp, "missing-key.pem")
		_, err := connectOnce(srv, d)
		if se := sdkErr(t, err); se.Code != sdk.CodeConfig || !strings.Contains(se.Message, "client_key") || !strings.Contains(se.Message, "missing-key.pem") {
			t.Fatalf("code %q: %v", se.Code, err)
		}
	})
}

func TestHTTPNotMCP(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	p := startTestServer(t, dir, "--http", "127.0.0.1:0", "--html-only")
	_, err := connectOnce(remote("http", p.URL+"/"), d)
	ce := connectErr(t, err)
	if ce.Code() != sdk.CodeNotMCP {
		t.Fatalf("code %q: %v", ce.Code(), err)
	}
	for _, want := range []string{"returned Content-Type 'text/html', not an MCP response", "https://host/mcp, not https://host/"} {
		if !strings.Contains(ce.Error(), want) {
			t.Fatalf("message %q lacks %q", ce.Error(), want)
		}
	}
	t.Run("skip_preflight", func(t *testing.T) {
		srv := remote("http", p.URL+"/")
		srv.Unknown = []string{"skip_preflight"}
		srv.Raw = map[string]any{"skip_preflight": true}
		srv.Extra = map[string]any{"skip_preflight": true}
		_, err := connectOnce(srv, d)
		// Without the preflight the handshake itself finds the web page.
		if ce := connectErr(t, err); ce.Code() != sdk.CodeNotMCP {
			t.Fatalf("code %q: %v", ce.Code(), err)
		}
	})
}

func TestHTTPAuthRequired(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	p := startTestServer(t, dir, "--http", "127.0.0.1:0", "--require-bearer", "sekrit-token")
	t.Run("no header", func(t *testing.T) {
		_, err := connectOnce(remote("http", p.URL+"/mcp"), d)
		ce := connectErr(t, err)
		if ce.Code() != sdk.CodeAuth || ce.Err.Status != 401 || !strings.Contains(ce.Challenge(), "resource_metadata=") {
			t.Fatalf("code %q status %d challenge %q: %v", ce.Code(), ce.Err.Status, ce.Challenge(), err)
		}
		for _, want := range []string{"needs credentials", "hermes mcp add ts --url " + p.URL + "/mcp --header 'Authorization: Bearer ...'", "${MCP_TS_API_KEY}"} {
			if !strings.Contains(ce.Error(), want) {
				t.Fatalf("message %q lacks %q", ce.Error(), want)
			}
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		srv := remote("http", p.URL+"/mcp")
		srv.Headers = map[string]string{"Authorization": "Bearer wrong-token-value"}
		_, err := connectOnce(srv, d)
		ce := connectErr(t, err)
		if ce.Code() != sdk.CodeAuth || ce.Err.Status != 401 {
			t.Fatalf("code %q status %d: %v", ce.Code(), ce.Err.Status, err)
		}
		if strings.Contains(ce.Error(), "wrong-token-value") {
			t.Fatalf("the token leaked into %q", ce.Error())
		}
	})
	t.Run("right token", func(t *testing.T) {
		srv := remote("http", p.URL+"/mcp")
		srv.Headers = map[string]string{"Authorization": "Bearer sekrit-token"}
		s := mustConnect(t, srv, d)
		callText(t, s, "echo", map[string]any{"message": "authed"})
	})
	t.Run("dynamic headers", func(t *testing.T) {
		var asked atomic.Int32
		dd := d
		dd.Headers = func(_ context.Context, req transport.HeadersRequest) (map[string]string, error) {
			asked.Add(1)
			if !strings.HasPrefix(req.URL, p.URL) || req.Method == "" {
				t.Errorf("headers asked for %s %s", req.Method, req.URL)
			}
			return map[string]string{"Authorization": "Bearer sekrit-token"}, nil
		}
		s := mustConnect(t, remote("http", p.URL+"/mcp"), dd)
		callText(t, s, "echo", map[string]any{"message": "authed"})
		// One per POST at least: server/discover (or initialize and
		// notifications/initialized), then the call.
		if asked.Load() < 2 {
			t.Fatalf("host asked for headers %d times", asked.Load())
		}
	})
}

// TestHTTPServerRequests: sampling, elicitation and roots reach the host in
// both eras: as the server's own requests before 2026-07-28, as
// input_required results answered and re-sent (SEP-2322) in it.
func TestHTTPServerRequests(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	h := &handlers{}
	d.Sampling, d.Elicitation, d.Roots = h, h, h
	p := startTestServer(t, dir, "--http", "127.0.0.1:0")
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			s := mustConnect(t, at(remote("http", p.URL+"/mcp"), rev), d)
			if got := callText(t, s, "sample", map[string]any{"prompt": "hello model"}); !strings.Contains(got, "model says: hello model") {
				t.Fatalf("sample = %q", got)
			}
			if got := callText(t, s, "elicit", map[string]any{"message": "ok?"}); !strings.Contains(got, "accept") {
				t.Fatalf("elicit = %q", got)
			}
			if got := callText(t, s, "roots", nil); !strings.Contains(got, "file:///project") {
				t.Fatalf("roots = %q", got)
			}
		})
	}
}

// TestHTTPListChanged: a tool added while serving reaches the host as
// tools/list_changed in both eras: on the call's own stream before
// 2026-07-28, on the subscriptions/listen stream Session.Listen opens in it.
func TestHTTPListChanged(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	p := startTestServer(t, dir, "--http", "127.0.0.1:0")
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			got := make(chan string, 16)
			d.OnNotification = func(_ string, n mcpvalue.Notification) { got <- n.Method }
			s := mustConnect(t, at(remote("http", p.URL+"/mcp"), rev), d)
			s.Listen(nil)
			if mcp.IsModernProtocol(rev) {
				waitNotification(t, got, mcp.MethodNotificationSubscriptionsAcknowledged)
			}
			callText(t, s, "add_tool", map[string]any{"name": "fresh_" + strings.ReplaceAll(rev, "-", "_")})
			waitNotification(t, got, mcp.MethodNotificationToolsListChanged)
		})
	}
}

func TestSSE(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	closed := make(chan error, 1)
	d.OnClosed = func(_ string, err error) { closed <- err }
	p := startTestServer(t, dir, "--sse", "127.0.0.1:0")
	srv := remote("sse", p.URL+"/sse")
	srv.Headers = map[string]string{"Authorization": "Bearer sse-tok"}
	s := mustConnect(t, srv, d)
	if got := callText(t, s, "echo", map[string]any{"message": "over sse"}); got != "over sse" {
		t.Fatalf("echo = %q", got)
	}
	if got := callText(t, s, "last_auth_header", nil); got != "Bearer sse-tok" {
		t.Fatalf("Authorization seen = %q", got)
	}
	p.stop()
	select {
	case err := <-closed:
		if sdk.ErrorCode(err) != sdk.CodeClosed || !strings.Contains(err.Error(), "SSE stream") {
			t.Fatalf("closed with %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the host never heard that the SSE stream was lost")
	}
}

func waitNotification(t *testing.T, got <-chan string, method string) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case m := <-got:
			if m == method {
				return
			}
		case <-deadline:
			t.Fatalf("no %s notification", method)
		}
	}
}
