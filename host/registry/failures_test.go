package registry_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/mark3labs/mcp-go/mcp"
)

// A server's own JSON-RPC error whose text reads like a lost session
// ("tool 'unknown session' not found") is the server's answer, not an
// expired session: the registry neither reconnects nor sends the call a
// second time, and the caller gets the server's message once. (Deciding on
// the text, the registry reconnected and repeated the call.)
func TestServerErrorTextIsNotASessionExpiry(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	m := startManager(t, registry.Options{Servers: []*config.Server{tsServer(dir, "ts")}, Deps: deps, Timings: fast()})
	sess := m.SessionOf("ts")
	// Two calls: a third failure in a row would open the breaker.
	for _, tool := range []string{"unknown session", "broken pipe"} {
		_, err := callTool(m, context.Background(), "ts", tool, nil)
		if err == nil || !strings.Contains(err.Error(), "'"+tool+"' not found") {
			t.Fatalf("call of %q: %v", tool, err)
		}
		if got := failure.Of(err); got != failure.CodeRefused {
			t.Errorf("call of %q: code %q, want %q (%v)", tool, got, failure.CodeRefused, err)
		}
		if failure.Reconnect(err) {
			t.Errorf("call of %q asks for a reconnect: %v", tool, err)
		}
	}
	if l := logs.String(); strings.Contains(l, "session expired") {
		t.Errorf("the registry took the server's answer for an expired session:\n%s", l)
	}
	mustCall(t, m, "mcp_ts_echo", map[string]any{"message": "same"})
	if again := m.SessionOf("ts"); again != sess {
		t.Error("the registry reconnected: a new session after the server's answers")
	}
}

// A connection that breaks under a call is reported as lost (the code the
// plugin gave it, CodeClosed), and the registry reconnects on its own.
func TestCrashDuringCallIsClosed(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	m := startManager(t, registry.Options{Servers: []*config.Server{tsServer(dir, "ts")}, Deps: deps, Timings: fast()})
	sess := m.SessionOf("ts")
	ce := callErr(t, m, "mcp_ts_crash", nil)
	if ce.Code != failure.CodeClosed || !strings.Contains(ce.Msg, "was lost during the call") {
		t.Fatalf("crash: %+v", ce)
	}
	eventually(t, 30*time.Second, "reconnect", func() bool { return status(m, "ts").State == registry.StateConnected })
	mustCall(t, m, "mcp_ts_echo", map[string]any{"message": "back"})
	if again := m.SessionOf("ts"); again == nil || again == sess {
		t.Error("no new session after the crash")
	}
}

// Lookup says what a name is without calling anything: registered,
// filtered, a tool the connected server does not offer, a disabled or
// failed server (with its failure's code and reason), or no server at
// all. Call refuses each the same way, with its code.
func TestLookup(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	ts := tsServer(dir, "ts")
	ts.Tools.Exclude = []string{"sleep"}
	off := tsServer(dir, "off")
	off.Enabled = false
	bad := tsServer(dir, "bad", "--fail-start", "no database here")
	m := startManager(t, registry.Options{Servers: []*config.Server{ts, off, bad}, Deps: deps, Timings: fast()})

	for _, c := range []struct {
		name   string
		want   registry.Availability
		server string
		code   failure.Code
	}{
		{"mcp_ts_echo", registry.Available, "ts", ""},
		{"mcp_ts_sleep", registry.Filtered, "ts", failure.CodeFiltered},
		{"mcp_ts_nope", registry.UnknownTool, "ts", failure.CodeNoSuchTool},
		{"mcp_off_echo", registry.ServerDisabled, "off", failure.CodeDisabled},
		{"mcp_nobody_echo", registry.UnknownServer, "", failure.CodeUnknownServer},
	} {
		l := m.Lookup(c.name)
		if l.Availability != c.want || l.Server != c.server {
			t.Errorf("Lookup(%s) = %v of %q, want %v of %q", c.name, l.Availability, l.Server, c.want, c.server)
		}
		if got := failure.Of(l.Err()); got != c.code {
			t.Errorf("Lookup(%s).Err() code %q, want %q", c.name, got, c.code)
		}
		if c.want == registry.Available {
			if l.Def.OriginalName != "echo" {
				t.Errorf("Lookup(%s).Def = %+v", c.name, l.Def)
			}
			continue
		}
		ce := callErr(t, m, c.name, nil)
		if ce.Code != c.code {
			t.Errorf("Call(%s): code %q, want %q (%s)", c.name, ce.Code, c.code, ce.Msg)
		}
	}
	if ce := callErr(t, m, "mcp_ts_sleep", nil); ce.Msg != "tool mcp_ts_sleep is not available: it is filtered by tools.include/exclude of server ts" {
		t.Errorf("filtered message %q", ce.Msg)
	}

	l := m.Lookup("mcp_bad_echo")
	st := status(m, "bad")
	if l.Availability != registry.ServerDown || l.Server != "bad" || l.Reason == "" || l.Reason != st.Error || l.Code != st.Code {
		t.Errorf("Lookup(mcp_bad_echo) = %+v; status %+v", l, st)
	}
	if !strings.Contains(l.Reason, "no database here") {
		t.Errorf("the failed server's reason %q lacks what it said", l.Reason)
	}
}

// A server that answers ping with an error of its own (not -32601, and
// words no list of markers knows) is alive: the keepalive takes the answer
// for "no ping here" and probes with tools/list from then on, on the same
// session. (Deciding on the text, every probe failed and the registry
// reconnected at each interval.)
func TestKeepaliveAfterPingRefused(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	srv := tsServer(dir, "ts", "--trace", "--protocols", mcp.LATEST_LEGACY_PROTOCOL_VERSION, "--ping-error", "ping is not offered by this server")
	srv.Protocol = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	srv.KeepaliveInterval = 50 * time.Millisecond
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
	s := m.SessionOf("ts")
	atConnect := serverTraces(deps, testserver.TraceList)
	eventually(t, 30*time.Second, "three tools/list probes at the server", func() bool {
		return serverTraces(deps, testserver.TraceList) >= atConnect+3
	})
	if m.SessionOf("ts") != s || status(m, "ts").State != registry.StateConnected {
		t.Fatal("the keepalive reconnected a server that answers")
	}
	if n := serverTraces(deps, testserver.TracePing); n != 1 {
		t.Errorf("%d pings; want one, then tools/list", n)
	}
}
