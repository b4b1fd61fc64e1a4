package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/mark3labs/mcp-go/mcp"
)

// The tests here run the negotiation of the protocol revision against
// servers that speak only some revisions (the test server's --protocols),
// over stdio and HTTP.

// countTraces counts a trace line of a stdio test server run with --trace
// under home.
func countTraces(home, line string) int {
	b, _ := os.ReadFile(filepath.Join(home, "logs", "mcp-stderr.log"))
	return strings.Count(string(b), line+"\n")
}

func TestNegotiateStdio(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, protocols string
		want            string
		why             string
	}{
		{"current only", "2026-07-28", session.Latest, "server/discover lists 2026-07-28"},
		{"every revision", "2026-07-28,2025-11-25,2025-06-18,2025-03-26", session.Latest, "server/discover lists 2026-07-28, 2025-11-25"},
		{"legacy", "2025-11-25,2025-06-18", "2025-11-25", "the server does not speak 2026-07-28 (server/discover: Method not found (-32601)); it chose 2025-11-25 in initialize"},
		{"old", "2025-03-26", "2025-03-26", "it chose 2025-03-26 in initialize"},
		// A server that ignores methods it does not know: the probe ends
		// when it answers a ping but not server/discover, not when the
		// probe's bound runs out.
		{"ignores discover", "2025-11-25,--discover=ignore", "2025-11-25",
			"(server/discover: the server answered ping but not server/discover (it ignores methods it does not know)); it chose 2025-11-25 in initialize"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, dir := deps(t)
			// c.protocols may end with the test server's --discover.
			protocols, discover, found := strings.Cut(c.protocols, ",--discover=")
			args := []string{"--protocols", protocols}
			if found {
				args = append(args, "--discover", discover)
			}
			s := connect(t, d, testServer(dir, args...))
			if s.Protocol.Revision != c.want || s.Init.ProtocolVersion != c.want || s.Protocol.Source != session.SourceNegotiated {
				t.Fatalf("protocol %+v (init %s), want %s negotiated", s.Protocol, s.Init.ProtocolVersion, c.want)
			}
			if !strings.Contains(s.Protocol.Why, c.why) {
				t.Fatalf("why %q, want it to say %q", s.Protocol.Why, c.why)
			}
			if got := callText(t, s, "echo", map[string]any{"message": "in " + c.want}); got != "in "+c.want {
				t.Fatalf("echo = %q", got)
			}
		})
	}
}

// TestNegotiationRemembered: what a server spoke is remembered in the state
// file, so that the next start of an older server goes straight to
// initialize (no server/discover probe); a changed entry forgets it, and a
// pinned revision neither reads nor writes it.
func TestNegotiationRemembered(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	srv := testServer(dir, "--protocols", "2025-11-25", "--trace")
	s := connect(t, d, srv)
	_ = s.Close()
	if n := countTraces(d.Home, testserver.TraceDiscover); n != 1 {
		t.Fatalf("first start: the server saw %d server/discover, want 1 (the probe)", n)
	}
	var doc struct {
		Servers map[string]struct{ Revision string } `json:"servers"`
	}
	b, err := os.ReadFile(filepath.Join(d.Home, session.MemoryFile))
	if err != nil || json.Unmarshal(b, &doc) != nil || doc.Servers["ts"].Revision != "2025-11-25" {
		t.Fatalf("state file %s: %v\n%s", session.MemoryFile, err, b)
	}
	if fi, err := os.Stat(filepath.Join(d.Home, session.MemoryFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode: %v %v", fi.Mode(), err)
	}

	s = connect(t, d, srv)
	if s.Protocol.Revision != "2025-11-25" || s.Protocol.Source != session.SourceRemembered ||
		!strings.Contains(s.Protocol.Why, "remembered from the last connection: the server does not speak 2026-07-28") {
		t.Fatalf("second start: %+v", s.Protocol)
	}
	_ = s.Close()
	if n := countTraces(d.Home, testserver.TraceDiscover); n != 1 {
		t.Fatalf("second start probed again: %d server/discover in all", n)
	}

	// Another command line is another server: negotiated afresh.
	other := testServer(dir, "--protocols", "2025-11-25,2025-06-18", "--trace")
	s = connect(t, d, other)
	if s.Protocol.Source != session.SourceNegotiated {
		t.Fatalf("changed entry: %+v", s.Protocol)
	}
	_ = s.Close()

	// A damaged state file remembers nothing and is rewritten.
	if err := os.WriteFile(filepath.Join(d.Home, session.MemoryFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	s = connect(t, d, srv)
	if s.Protocol.Source != session.SourceNegotiated || s.Protocol.Revision != "2025-11-25" {
		t.Fatalf("damaged state file: %+v", s.Protocol)
	}
	_ = s.Close()
	if b, _ := os.ReadFile(filepath.Join(d.Home, session.MemoryFile)); !json.Valid(b) {
		t.Fatalf("state file not rewritten: %q", b)
	}
}

// TestNegotiationPinned: the protocol key pins a revision; a server that
// does not speak it is an error that says so and what to do.
func TestNegotiationPinned(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	for _, c := range []struct {
		name, protocols, pin, want string
	}{
		{"current, server legacy", "2025-11-25", session.Latest,
			"does not speak the pinned protocol 2026-07-28 (server/discover: Method not found (-32601)); it answered with 2025-11-25. Set protocol: auto (or 2025-11-25)"},
		{"legacy, server current", "2026-07-28", "2025-11-25",
			"does not speak the pinned protocol 2025-11-25; it speaks 2026-07-28. Set protocol: auto"},
		{"older, server newer", "2025-11-25", "2025-06-18",
			"does not speak the pinned protocol 2025-06-18; it answered with 2025-11-25. Set protocol: auto (or 2025-11-25)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := testServer(dir, "--protocols", c.protocols)
			srv.Protocol = c.pin
			_, err := session.Connect(context.Background(), session.PlanFor(srv, d.Home, d.Environ), d)
			var ce *session.ConnectError
			if !errors.As(err, &ce) || ce.Code() != sdk.CodeConfig {
				t.Fatalf("connect = %v (%T), want a config error", err, err)
			}
			if !strings.Contains(ce.Error(), c.want) {
				t.Fatalf("error %q, want it to say %q", ce.Error(), c.want)
			}
		})
	}
	// A pinned revision the server speaks.
	srv := testServer(dir, "--protocols", "2025-11-25,2025-06-18")
	srv.Protocol = "2025-06-18"
	s := connect(t, d, srv)
	if s.Protocol.Revision != "2025-06-18" || s.Protocol.Source != session.SourcePinned {
		t.Fatalf("pinned: %+v", s.Protocol)
	}
	if _, err := os.Stat(filepath.Join(d.Home, session.MemoryFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a pinned revision was remembered: %v", err)
	}
}

// TestNegotiateHTTP: over HTTP, a server of the current revision only
// refuses a legacy initialize with HTTP 400; hermes negotiates to it, and a
// remembered legacy revision that the server no longer speaks is
// negotiated again (and forgotten) instead of failing as a wrong URL.
func TestNegotiateHTTP(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	p := startTestServer(t, dir, "--http", "127.0.0.1:0", "--protocols", "2026-07-28")
	srv := remote("http", p.URL+"/mcp")
	s := mustConnect(t, srv, d)
	if s.Protocol.Revision != session.Latest {
		t.Fatalf("auto: %+v", s.Protocol)
	}
	_ = s.Close()

	// As if the server had spoken 2025-11-25 last time (it was upgraded).
	mem := `{"servers": {"ts": {"revision": "2025-11-25", "entry": "%s"}}, "order": ["ts"]}`
	if err := os.WriteFile(filepath.Join(d.Home, session.MemoryFile), []byte(strings.Replace(mem, "%s", entryDigestOf(t, d, srv), 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	s = mustConnect(t, srv, d)
	if s.Protocol.Revision != session.Latest || s.Protocol.Source != session.SourceNegotiated ||
		!strings.Contains(s.Protocol.Why, "the server no longer speaks the remembered 2025-11-25") {
		t.Fatalf("after the upgrade: %+v", s.Protocol)
	}
	if got := callText(t, s, "echo", map[string]any{"message": "upgraded"}); got != "upgraded" {
		t.Fatalf("echo = %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(d.Home, session.MemoryFile)); !strings.Contains(string(b), `"revision": "2026-07-28"`) {
		t.Fatalf("the state file still says %s", b)
	}

	// Pinned to the legacy revision, the refusal says why, not "wrong URL".
	pinned := remote("http", p.URL+"/mcp")
	pinned.Protocol = "2025-11-25"
	_, err := session.Connect(context.Background(), session.PlanFor(pinned, d.Home, d.Environ), d)
	if err == nil || !strings.Contains(err.Error(), "does not speak the pinned protocol 2025-11-25; it speaks 2026-07-28") ||
		strings.Contains(err.Error(), "transport: sse") {
		t.Fatalf("pinned legacy against a current server: %v", err)
	}
}

// TestNegotiateHTTPRefusal: a server that refuses server/discover with HTTP
// 400 and a JSON-RPC error whose id is null (as a stateful TypeScript SDK
// server refuses every request before initialize) ends the probe at once:
// the refusal is the probe's answer, and the host falls back to initialize
// without waiting out the probe's bound.
func TestNegotiateHTTPRefusal(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	p := startTestServer(t, dir, "--http", "127.0.0.1:0", "--protocols", "2025-11-25", "--discover", "null-id")
	s := mustConnect(t, remote("http", p.URL+"/mcp"), d)
	if s.Protocol.Revision != "2025-11-25" || s.Protocol.Source != session.SourceNegotiated ||
		!strings.Contains(s.Protocol.Why, "(server/discover: Bad Request: Server not initialized (-32000)); it chose 2025-11-25 in initialize") {
		t.Fatalf("protocol %+v, want the refusal as the probe's end", s.Protocol)
	}
	if got := callText(t, s, "echo", map[string]any{"message": "after the refusal"}); got != "after the refusal" {
		t.Fatalf("echo = %q", got)
	}
}

// entryDigestOf learns the state file's key of srv by letting hermes
// write it.
func entryDigestOf(t *testing.T, d session.Deps, srv *config.Server) string {
	t.Helper()
	var doc struct {
		Servers map[string]struct{ Entry string } `json:"servers"`
	}
	b, err := os.ReadFile(filepath.Join(d.Home, session.MemoryFile))
	if err != nil || json.Unmarshal(b, &doc) != nil || doc.Servers[srv.Name].Entry == "" {
		t.Fatalf("state file: %v %s", err, b)
	}
	return doc.Servers[srv.Name].Entry
}

// TestNoCommonRevision: a server that speaks only revisions hermes does not
// know gets an error with both lists.
func TestNoCommonRevision(t *testing.T) {
	t.Parallel()
	d, _ := deps(t)
	refuse := func(w http.ResponseWriter, id json.RawMessage, e mcp.JSONRPCErrorDetails) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		uv := mcp.UnsupportedProtocolVersionError{Supported: []string{"2099-01-01", "\x1b]0;pwned\a2098-01-01"}}
		switch m.Method {
		case string(mcp.MethodServerDiscover), string(mcp.MethodInitialize):
			refuse(w, m.ID, uv.JSONRPCError().Error)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(ts.Close)
	_, err := session.Connect(context.Background(), session.PlanFor(remote("http", ts.URL+"/mcp"), d.Home, d.Environ), d)
	var ce *session.ConnectError
	if !errors.As(err, &ce) || ce.Code() != sdk.CodeConfig {
		t.Fatalf("connect = %v (%T), want a config error", err, err)
	}
	for _, want := range []string{"no protocol revision in common", "the server speaks 2099-01-01, ", "hermes speaks 2026-07-28, 2025-11-25"} {
		if !strings.Contains(ce.Error(), want) {
			t.Fatalf("error %q, want it to say %q", ce.Error(), want)
		}
	}
	if strings.ContainsAny(ce.Error(), "\x1b\a") {
		t.Fatalf("the server's text reached the message unescaped: %q", ce.Error())
	}
}
