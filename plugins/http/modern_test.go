package main

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/hermes-agent/hermes/sdk/mcpgo/pluginconn"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/sdk/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// recorded is what a test server saw of one HTTP request.
type recorded struct {
	method, mcpMethod string
	header            http.Header
}

// recorder wraps an MCP handler and records every request.
type recorder struct {
	mu   sync.Mutex
	seen []recorded
}

func (rc *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := recorded{method: r.Method, header: r.Header.Clone()}
		if r.Method == http.MethodPost {
			rec.mcpMethod, _ = peekMethod(r)
		}
		rc.mu.Lock()
		rc.seen = append(rc.seen, rec)
		rc.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (rc *recorder) all() []recorded {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]recorded(nil), rc.seen...)
}

// TestModernRevision: against a server of the 2026-07-28 revision the
// plugin carries the stateless protocol: no initialize, no session, no GET
// stream, and every POST carries MCP-Protocol-Version and the standard
// Mcp-Method / Mcp-Name headers the host attached to the message.
func TestModernRevision(t *testing.T) {
	rec := &recorder{}
	ms := newMCPServer(t, serverOpts{stateless: true, wrap: rec.wrap})
	s, err := connectAt(t, transport.Config{URL: ms.URL}, pluginconn.DialOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if v := s.c.ProtocolVersion(); v != mcp.LATEST_PROTOCOL_VERSION {
		t.Fatalf("negotiated %q, want %q", v, mcp.LATEST_PROTOCOL_VERSION)
	}
	if got, err := s.call("echo", map[string]any{"message": "modern"}); err != nil || got != "modern" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	if s.c.GetSessionId() != "" {
		t.Fatalf("session id %q on a stateless revision", s.c.GetSessionId())
	}
	_ = s.c.Close()
	var calls int
	for _, r := range rec.all() {
		switch {
		case r.method == http.MethodHead:
			// The plugin's preflight (preflight.go).
		case r.method != http.MethodPost:
			t.Errorf("the server saw %s %v; the 2026-07-28 revision has no GET stream or DELETE", r.method, r.header)
		case r.mcpMethod == string(mcp.MethodInitialize):
			t.Error("the server saw initialize on the 2026-07-28 revision")
		default:
			if v := r.header.Get("Mcp-Protocol-Version"); v != mcp.LATEST_PROTOCOL_VERSION {
				t.Errorf("%s went out with MCP-Protocol-Version %q", r.mcpMethod, v)
			}
			if v := r.header.Get("Mcp-Method"); v != r.mcpMethod {
				t.Errorf("%s went out with Mcp-Method %q", r.mcpMethod, v)
			}
		}
		if r.mcpMethod == string(mcp.MethodToolsCall) {
			calls++
			if v := r.header.Get("Mcp-Name"); v != "echo" {
				t.Errorf("tools/call went out with Mcp-Name %q, want echo", v)
			}
		}
	}
	if calls != 1 {
		t.Fatalf("the server saw %d tools/call, want 1", calls)
	}
}

// TestRefusedInitializeSaysWhy: a server of the current revision answers a
// legacy initialize with HTTP 400 and a JSON-RPC error naming the revisions
// it speaks. The host gets that error as the answer (so it can negotiate),
// not "not a Streamable HTTP endpoint".
func TestRefusedInitializeSaysWhy(t *testing.T) {
	refuse := func(body string, ct string) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if m, _ := peekMethod(r); m == string(mcp.MethodInitialize) {
					w.Header().Set("Content-Type", ct)
					w.WriteHeader(http.StatusBadRequest)
					_, _ = w.Write([]byte(body))
					return
				}
				next.ServeHTTP(w, r)
			})
		}
	}
	unsupported, _ := json.Marshal(mcp.UnsupportedProtocolVersionError{Version: "2025-11-25", Supported: []string{"2026-07-28"}}.JSONRPCError())
	ms := newMCPServer(t, serverOpts{stateless: true, wrap: refuse(string(unsupported), "application/json")})
	_, err := connect(t, transport.Config{URL: ms.URL}, pluginconn.DialOptions{})
	var uv mcp.UnsupportedProtocolVersionError
	if !errors.As(err, &uv) || len(uv.Supported) != 1 || uv.Supported[0] != "2026-07-28" {
		t.Fatalf("initialize refused with 400: got %v (%T), want the server's UnsupportedProtocolVersionError", err, err)
	}

	// Without a JSON-RPC body the refusal is an HTTP error that says so,
	// with the body's start, and no wrong-transport advice.
	ms = newMCPServer(t, serverOpts{stateless: true, wrap: refuse(`{"detail":"bad header"}`, "application/json")})
	_, err = connect(t, transport.Config{URL: ms.URL}, pluginconn.DialOptions{})
	if err == nil || !strings.Contains(err.Error(), "refused initialize with HTTP 400 Bad Request") || !strings.Contains(err.Error(), "bad header") ||
		strings.Contains(err.Error(), "transport: sse") {
		t.Fatalf("plain 400: %v", err)
	}
}

// TestSSEIsLegacyOnly: the legacy SSE transport tells the host that only
// revisions before 2026-07-28 work over it; Streamable HTTP speaks all.
func TestSSEIsLegacyOnly(t *testing.T) {
	ms := newMCPServer(t, serverOpts{sse: true})
	s := mustConnect(t, transport.Config{Transport: "sse", URL: ms.URL}, pluginconn.DialOptions{})
	if p := s.conn.Properties(); !p.LegacyOnly {
		t.Fatalf("SSE properties %+v, want LegacyOnly", p)
	}
}

// TestListenOutlivesTheCallTimeout: the subscriptions/listen stream of the
// current revision carries notifications for as long as the host keeps it,
// past the per-call timeout that bounds ordinary requests.
func TestListenOutlivesTheCallTimeout(t *testing.T) {
	ms := newMCPServer(t, serverOpts{stateless: true})
	notes := make(chan string, 16)
	s, err := connectAt(t, transport.Config{URL: ms.URL, Timeout: 300 * time.Millisecond}, pluginconn.DialOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	s.c.OnNotification(func(n mcp.JSONRPCNotification) { notes <- n.Method })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	listenErr := make(chan error, 1)
	stop, err := s.c.ListenAsync(ctx, mcp.SubscriptionFilter{ToolsListChanged: true}, func(err error) { listenErr <- err })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	wait := func(method string) {
		t.Helper()
		for {
			select {
			case m := <-notes:
				if m == method {
					return
				}
			case err := <-listenErr:
				t.Fatalf("listen ended waiting for %s: %v", method, err)
			case <-time.After(10 * time.Second):
				t.Fatalf("no %s", method)
			}
		}
	}
	wait(string(mcp.MethodNotificationSubscriptionsAcknowledged))
	// A call that lasts longer than the call timeout of the listen's own
	// request would, had it one: the server's sleep, bounded by its timeout.
	if _, err := s.call("sleep", map[string]any{"ms": 200}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.call("sleep", map[string]any{"ms": 200}); err != nil {
		t.Fatal(err)
	}
	ms.mcp.AddTool(mcp.NewTool("late"), nil)
	wait(string(mcp.MethodNotificationToolsListChanged))
}
