package registry_test

import (
	"context"
	"errors"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/internal/testproc"
	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/mark3labs/mcp-go/mcp"
)

// Names, filters (at list and at call time), collisions, pagination and
// utility tools with capability gating, against the Go test server.
func TestNamesFiltersAndUtilities(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	alpha := tsServer(dir, "alpha", "--tools", "3", "--page-size", "2", "--resources", "--prompts")
	alpha.Tools.Include = []string{"echo", "add", "tool_*"}
	alpha.Tools.Prompts = false
	beta := tsServer(dir, "beta")
	beta.Tools.Exclude = []string{"crash", "sl*"}
	beta.SupportsParallelToolCalls = true
	ab1 := tsServer(dir, "a-b")
	ab1.Tools.Include = []string{"echo"}
	ab2 := tsServer(dir, "a_b")
	ab2.Tools.Include = []string{"echo", "add"}
	rsrc := tsServer(dir, "rsrc", "--no-tools-capability", "--resources", "--prompts")
	m := startManager(t, registry.Options{
		Servers:  []*config.Server{alpha, beta, ab1, ab2, rsrc},
		Deps:     deps,
		Builtins: []string{"mcp_beta_echo"},
	})
	got := names(m.Tools())

	hasAll(t, got, "mcp_alpha_echo", "mcp_alpha_add", "mcp_alpha_tool_1", "mcp_alpha_tool_2", "mcp_alpha_tool_3",
		"mcp_alpha_list_resources", "mcp_alpha_read_resource", "mcp_beta_add", "mcp_beta_pid", "mcp_a_b_echo", "mcp_a_b_add",
		"mcp_rsrc_list_resources", "mcp_rsrc_read_resource", "mcp_rsrc_list_prompts", "mcp_rsrc_get_prompt")
	hasNone(t, got, "mcp_alpha_sleep", "mcp_alpha_list_prompts", "mcp_alpha_get_prompt", "mcp_beta_echo",
		"mcp_beta_crash", "mcp_beta_sleep", "mcp_beta_list_resources", "mcp_rsrc_echo")
	if d := got["mcp_a_b_echo"]; d.Server != "a-b" {
		t.Errorf("mcp_a_b_echo belongs to %q, want the earlier server a-b", d.Server)
	}
	if d := got["mcp_alpha_echo"]; d.Parameters["type"] != "object" || d.Description == "" || d.OriginalName != "echo" {
		t.Errorf("echo def = %+v", d)
	}
	for _, w := range []string{"already a built-in tool", "already used by tool 'echo' of MCP server 'a-b'"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("log lacks collision warning %q", w)
		}
	}

	// Pagination was followed (page size 2): all tools counted.
	if st := status(m, "alpha"); st.State != registry.StateConnected || st.Enabled != 5 || st.Total < 20 || st.Toolset != "mcp-alpha" {
		t.Errorf("alpha status = %+v", st)
	}
	if st := status(m, "rsrc"); st.Total != 0 || st.Enabled != 0 || len(st.Registered) != 4 {
		t.Errorf("rsrc status = %+v", st)
	}
	// ServerTools is the whole listing the registry registers from, before
	// the filter; a server without tools is listed with none.
	tools, listed := m.ServerTools("alpha")
	if !listed || len(tools) != status(m, "alpha").Total || !slices.ContainsFunc(tools, func(t mcpvalue.Tool) bool { return t.Name == "sleep" }) {
		t.Errorf("ServerTools(alpha) = %d tools, listed %v", len(tools), listed)
	}
	if tools, listed := m.ServerTools("rsrc"); !listed || len(tools) != 0 {
		t.Errorf("ServerTools(rsrc) = %v, listed %v", tools, listed)
	}
	if _, listed := m.ServerTools("nope"); listed {
		t.Error("ServerTools of an unknown server reports a listing")
	}

	if r := mustCall(t, m, "mcp_alpha_echo", map[string]any{"message": "hi"}); r["result"] != "hi" {
		t.Errorf("echo = %v", r)
	}
	if r := mustCall(t, m, "mcp_alpha_tool_3", nil); r["result"] != "tool_3" {
		t.Errorf("tool_3 = %v", r)
	}
	// A filtered tool does not exist, by model name or by MCP name.
	ce := callErr(t, m, "mcp_alpha_sleep", map[string]any{"ms": 1})
	if ce.Code != failure.CodeFiltered || !strings.Contains(ce.Msg, "filtered by tools.include/exclude of server alpha") {
		t.Errorf("filtered call: %+v", ce)
	}
	if _, err := callTool(m, context.Background(), "beta", "crash", nil); err == nil || !strings.Contains(err.Error(), "filtered") {
		t.Errorf("CallTool of an excluded tool: %v", err)
	}
	if ce := callErr(t, m, "mcp_nope_tool", nil); !failure.NotFound(ce) {
		t.Errorf("unknown tool: %+v", ce)
	}

	if !m.ParallelSafe("mcp_beta_add") || m.ParallelSafe("mcp_alpha_add") || m.ParallelSafe("mcp_nope") {
		t.Error("ParallelSafe does not follow supports_parallel_tool_calls")
	}

	// Utilities.
	r := mustCall(t, m, "mcp_rsrc_list_resources", nil)
	if !strings.Contains(toJSON(r), "test://static/hello.txt") {
		t.Errorf("list_resources = %v", r)
	}
	// Resource templates beside the resources (resources/templates/list).
	if tm, _ := r["resourceTemplates"].([]any); len(tm) != 1 || toJSON(tm[0]) != `{"description":"An item by id.","mimeType":"application/json","name":"item","uriTemplate":"test://items/{id}"}` {
		t.Errorf("list_resources templates = %v", r["resourceTemplates"])
	}
	out, err := call(m, context.Background(), "mcp_rsrc_read_resource", nil)
	if err == nil || out != `{"error":"Missing required parameter 'uri'"}` {
		t.Errorf("read_resource without uri = %s, %v", out, err)
	}
	r = mustCall(t, m, "mcp_rsrc_read_resource", map[string]any{"uri": "test://static/hello.txt"})
	if s, _ := r["result"].(string); s == "" {
		t.Errorf("read_resource = %v", r)
	}
	if out, err := call(m, context.Background(), "mcp_rsrc_get_prompt", map[string]any{}); err == nil || !strings.Contains(out, "Missing required parameter 'name'") {
		t.Errorf("get_prompt without name = %s", out)
	}
	r = mustCall(t, m, "mcp_rsrc_get_prompt", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}})
	if !strings.Contains(toJSON(r), "Ada") {
		t.Errorf("get_prompt = %v", r)
	}
	if !strings.Contains(logs.String(), "MCP: registered") || !strings.Contains(logs.String(), "from 5 server(s) (0 failed)") {
		t.Errorf("no discovery summary in log:\n%s", logs.String())
	}
}

// One server hanging in initialize and one missing executable beside good
// ones: the good ones are connected with their tools while the hanging one
// is still connecting; every failure carries a readable reason.
func TestDiscoveryIsolatesFailures(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	hang := tsServer(dir, "hang", "--hang-initialize")
	// Long enough that the good servers connect before it ends, however
	// loaded the machine (Start waits it out).
	hang.ConnectTimeout = 20 * time.Second
	missing := tsServer(dir, "missing")
	missing.Command = filepath.Join(t.TempDir(), "no-such-mcp-server")
	disabled := tsServer(dir, "off")
	disabled.Enabled = false
	disabled.Command = "/nonexistent"
	bad := tsServer(dir, "bad")
	bad.Err = errors.New("needs ${MISSING_TOKEN}: set it in the environment or .env")
	servers := []*config.Server{hang, missing, disabled, bad}
	for i := range 3 {
		servers = append(servers, tsServer(dir, "good"+strconv.Itoa(i)))
	}
	m := registry.New(registry.Options{Servers: servers, Deps: deps, Timings: fast()})
	t.Cleanup(func() { m.Close() })

	// While Start runs, watch for the moment all good servers are up.
	seen := make(chan []registry.ServerStatus, 1)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			st := m.Status()
			up := 0
			for _, s := range st {
				if strings.HasPrefix(s.Name, "good") && s.State == registry.StateConnected && s.Enabled > 0 {
					up++
				}
			}
			if up == 3 {
				seen <- st
				return
			}
		}
	}()
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer close(stop)
	select {
	case st := <-seen:
		for _, s := range st {
			if s.Name == "hang" && s.State == registry.StateConnected {
				t.Error("hang connected?")
			}
			if s.Name == "hang" && s.Error != "" {
				t.Errorf("good servers waited for the hanging one: it had already failed (%s)", s.Error)
			}
		}
	case <-time.After(60 * time.Second):
		t.Fatal("good servers never all connected")
	}

	for i := range 3 {
		if st := status(m, "good"+strconv.Itoa(i)); st.State != registry.StateConnected || st.Enabled == 0 {
			t.Errorf("good%d: %+v", i, st)
		}
	}
	if st := status(m, "hang"); st.State == registry.StateConnected || !strings.Contains(st.Error, "initialize") {
		t.Errorf("hang: %+v", st)
	}
	if st := status(m, "missing"); st.State != registry.StateFailed || !strings.Contains(st.Error, "missing executable") {
		t.Errorf("missing: %+v", st)
	}
	if st := status(m, "off"); st.State != registry.StateDisabled || st.Error != "" {
		t.Errorf("disabled: %+v", st)
	}
	if st := status(m, "bad"); st.State != registry.StateFailed || !strings.Contains(st.Error, "MISSING_TOKEN") {
		t.Errorf("bad: %+v", st)
	}
	if !strings.Contains(logs.String(), "from 3 server(s) (3 failed)") {
		t.Errorf("summary line missing:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "/nonexistent") {
		t.Error("a disabled server was started")
	}
}

// pidOf calls server ts's pid tool and returns that server's pid as this
// test sees it: the server runs in a pid namespace of its own where the
// kernel allows one, and reports the pid it has there.
func pidOf(t *testing.T, m *registry.Manager, tool string) int {
	t.Helper()
	r := mustCall(t, m, tool, nil)
	nsPid, err := strconv.Atoi(r["result"].(string))
	if err != nil {
		t.Fatalf("pid = %v", r)
	}
	s := m.SessionOf("ts")
	if s == nil {
		t.Fatal("no session of ts after a call to it")
	}
	pid := testproc.Below(s.Plugin.Pid(), nsPid)
	if pid == 0 {
		t.Fatalf("no process below plugin %d has pid %d in its namespace", s.Plugin.Pid(), nsPid)
	}
	return pid
}

// The server process killed between calls of one manager: the next call
// succeeds on a new process. A call in flight when it dies fails at once.
func TestReconnectAfterServerKilled(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	m := startManager(t, registry.Options{Servers: []*config.Server{tsServer(dir, "ts", "--trace")}, Deps: deps, Timings: fast()})
	pid := pidOf(t, m, "mcp_ts_pid")
	old := m.SessionOf("ts")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-old.Done()
	if got := pidOf(t, m, "mcp_ts_pid"); got == pid {
		t.Fatalf("same pid %d after kill", got)
	}

	// In flight: fails with a clear error that the call was lost, not at
	// its timeout (which would say so), whatever the machine's speed.
	pid = pidOf(t, m, "mcp_ts_pid")
	errc := make(chan error, 1)
	go func() {
		_, err := call(m, context.Background(), "mcp_ts_sleep", map[string]any{"ms": 20000})
		errc <- err
	}()
	eventually(t, 10*time.Second, "the call to reach the server", func() bool {
		return serverTraces(deps, testserver.TraceSleepStarted) == 1
	})
	_ = syscall.Kill(pid, syscall.SIGKILL)
	err := <-errc
	if err == nil || !strings.Contains(err.Error(), "lost during the call") {
		t.Fatalf("in-flight call after kill: %v", err)
	}
	eventually(t, 10*time.Second, "reconnect", func() bool { return status(m, "ts").State == registry.StateConnected })
	mustCall(t, m, "mcp_ts_echo", map[string]any{"message": "back"})
}

// The transport plugin killed: same as a dropped connection.
func TestReconnectAfterPluginKilled(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	m := startManager(t, registry.Options{Servers: []*config.Server{tsServer(dir, "ts")}, Deps: deps, Timings: fast()})
	s := m.SessionOf("ts")
	if err := syscall.Kill(s.Plugin.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	if r := mustCall(t, m, "mcp_ts_echo", map[string]any{"message": "again"}); r["result"] != "again" {
		t.Fatalf("echo after plugin kill = %v", r)
	}
	if n := m.SessionOf("ts"); n == nil || n == s || n.Plugin.Pid() == s.Plugin.Pid() {
		t.Fatal("no new plugin")
	}
}

// A server down for good: reconnects are exhausted, it is parked with its
// tools withdrawn, calls get the transport-down error and then the breaker
// message; when the server can start again it is revived.
func TestParkBreakerAndRevive(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	tmp := t.TempDir()
	mark := filepath.Join(tmp, "up")
	if err := os.WriteFile(mark, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(tmp, "server.sh")
	body := "#!/bin/sh\n[ -f \"$MARK\" ] || { echo 'server is gone' >&2; exit 1; }\nexec \"$SERVER\" \"$@\"\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	srv := tsServer(dir, "ts")
	srv.Command = script
	srv.Env = map[string]string{"MARK": mark, "SERVER": filepath.Join(dir, "hermes-testserver")}
	tm := fast()
	tm.ParkedRetry = 2 * time.Second
	tm.SessionWait = 200 * time.Millisecond
	tm.BreakerCooldown = 30 * time.Second
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: tm})
	pid := pidOf(t, m, "mcp_ts_pid")

	if err := os.Remove(mark); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	// park sets the state, then withdraws the tools: wait for both.
	eventually(t, 20*time.Second, "parked with its tools withdrawn", func() bool {
		st := status(m, "ts")
		return st.State == registry.StateParked && len(st.Registered) == 0
	})
	if st := status(m, "ts"); st.Error == "" || len(st.Registered) != 0 {
		t.Errorf("parked status = %+v", st)
	}
	if _, ok := names(m.Tools())["mcp_ts_echo"]; ok {
		t.Error("parked server's tools still registered")
	}
	for i := range registry.DefaultBreakerThreshold {
		ce := callErr(t, m, "mcp_ts_echo", map[string]any{"message": "x"})
		if ce.Code != failure.CodeDown || !strings.Contains(ce.Msg, "transport is down; reconnect requested") {
			t.Fatalf("call %d while parked: %+v", i, ce)
		}
	}
	ce := callErr(t, m, "mcp_ts_echo", map[string]any{"message": "x"})
	if ce.Code != failure.CodeBreaker || !strings.Contains(ce.Msg, "Do NOT retry this tool yet") ||
		!strings.Contains(ce.Msg, "after 3 consecutive failures") {
		t.Fatalf("breaker: %+v", ce)
	}

	// The server can start again: the parked retry brings it back and a good
	// connect closes the breaker.
	if err := os.WriteFile(mark, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "revived", func() bool { return status(m, "ts").State == registry.StateConnected })
	if r := mustCall(t, m, "mcp_ts_echo", map[string]any{"message": "alive"}); r["result"] != "alive" {
		t.Fatalf("after revive: %v", r)
	}
	if !strings.Contains(logs.String(), "tools withdrawn") {
		t.Error("parking not logged")
	}
}

// A tool call wakes a parked server at once instead of waiting for the
// parked retry.
func TestCallWakesParkedServer(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	tmp := t.TempDir()
	mark := filepath.Join(tmp, "up")
	script := filepath.Join(tmp, "server.sh")
	body := "#!/bin/sh\n[ -f \"$MARK\" ] || exit 1\nexec \"$SERVER\" \"$@\"\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	srv := tsServer(dir, "ts")
	srv.Command = script
	srv.Env = map[string]string{"MARK": mark, "SERVER": filepath.Join(dir, "hermes-testserver")}
	tm := fast()
	tm.ParkedRetry = time.Hour
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: tm})
	// Three quick attempts, then it waits for the (hour-long) parked retry.
	eventually(t, 10*time.Second, "first connect given up", func() bool { return status(m, "ts").State == registry.StateFailed })
	if err := os.WriteFile(mark, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The server never listed tools, so the call goes by MCP name.
	res, err := callTool(m, context.Background(), "ts", "echo", map[string]any{"message": "woken"})
	if err != nil || res.IsError {
		t.Fatalf("call did not wake the server: %v", err)
	}
	if _, ok := names(m.Tools())["mcp_ts_echo"]; !ok {
		t.Error("tools not registered after wake")
	}
}

// list_changed: tools added and removed at runtime are followed, in the
// background, with a warning naming them; a burst of 100 notifications
// costs a handful of refreshes.
func TestListChanged(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	m := startManager(t, registry.Options{Servers: []*config.Server{tsServer(dir, "ts")}, Deps: deps, Timings: fast()})

	mustCall(t, m, "mcp_ts_add_tool", map[string]any{"name": "dyn_one"})
	eventually(t, 10*time.Second, "dyn_one registered", func() bool { _, ok := m.Tool("mcp_ts_dyn_one"); return ok })
	if r := mustCall(t, m, "mcp_ts_dyn_one", nil); r["result"] != "dyn_one" {
		t.Errorf("dyn_one = %v", r)
	}
	mustCall(t, m, "mcp_ts_remove_tool", map[string]any{"name": "dyn_one"})
	eventually(t, 10*time.Second, "dyn_one withdrawn", func() bool { _, ok := m.Tool("mcp_ts_dyn_one"); return !ok })
	eventually(t, 5*time.Second, "change warnings", func() bool {
		l := logs.String()
		return strings.Contains(l, "added: dyn_one; removed: none") && strings.Contains(l, "added: none; removed: dyn_one")
	})
	if _, ok := m.Tool("mcp_ts_echo"); !ok {
		t.Error("unchanged tool lost in a refresh")
	}

	before := status(m, "ts").Refreshes
	mustCall(t, m, "mcp_ts_notify_burst", map[string]any{"count": 100})
	// A tool added after the burst is a barrier: its notification comes
	// after the burst's on the same stream, and the one refresher handles
	// them in order, so once it is registered the burst has been drained
	// (the barrier costs one refresh more at most).
	mustCall(t, m, "mcp_ts_add_tool", map[string]any{"name": "after_burst"})
	eventually(t, 10*time.Second, "the refresher to reach the barrier", func() bool { _, ok := m.Tool("mcp_ts_after_burst"); return ok })
	n := status(m, "ts").Refreshes - before
	t.Logf("100 list_changed notifications (and the barrier) -> %d refreshes", n)
	if n > 11 {
		t.Errorf("%d refreshes for a burst of 100 and one more change; want a handful", n)
	}
}

// Server log notifications reach the host log at the mapped level, capped.
func TestServerLogNotifications(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	m := startManager(t, registry.Options{Servers: []*config.Server{tsServer(dir, "ts")}, Deps: deps, Timings: fast()})
	mustCall(t, m, "mcp_ts_log", map[string]any{"level": "warning", "logger": "lg", "data": "disk almost full"})
	mustCall(t, m, "mcp_ts_log", map[string]any{"level": "critical", "logger": "lg", "data": map[string]any{"k": 1}})
	mustCall(t, m, "mcp_ts_log", map[string]any{"level": "error", "logger": "big", "data": strings.Repeat("x", 5000)})
	eventually(t, 5*time.Second, "log lines", func() bool {
		l := logs.String()
		return strings.Contains(l, "[WARN]  test.mcp: MCP server log [ts/lg]: disk almost full") &&
			strings.Contains(l, `[ERROR] test.mcp: MCP server log [ts/lg]: {"k":1}`) &&
			strings.Contains(l, "MCP server log [ts/big]: ")
	})
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "[ts/big]") && strings.Count(line, "x") > registry.MaxServerLogLen+10 {
			t.Errorf("log data not capped: %d chars", len(line))
		}
	}
}

// A call past the server's timeout returns the timeout message at once
// and the server hears that the request was cancelled.
func TestCallTimeout(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	srv := tsServer(dir, "ts")
	srv.Timeout = 500 * time.Millisecond
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
	// The sleep outlasts the timeout on any machine: only the timeout can
	// end the call with this error.
	ce := callErr(t, m, "mcp_ts_sleep", map[string]any{"ms": 20000})
	if ce.Code != failure.CodeTimeout || ce.Msg != "MCP call timed out after 0.5s" {
		t.Fatalf("timeout: %+v", ce)
	}
	eventually(t, 5*time.Second, "server saw the cancellation", func() bool {
		r := mustCall(t, m, "mcp_ts_cancelled_count", nil)
		return r["result"] == "1"
	})
}

// Calls to one server run concurrently (no global lock): four sleeps on
// one server are all sleeping at once (the server says when each starts;
// its mcp-go server runs five requests at a time), and calls to echo, on
// it and on another server, answer while they sleep. Nothing is timed.
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	a := tsServer(dir, "a", "--trace")
	a.Timeout = time.Hour
	m := startManager(t, registry.Options{Servers: []*config.Server{a, tsServer(dir, "b")}, Deps: deps, Timings: fast()})
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Sleeps far longer than the test: they end when ctx is
			// cancelled.
			_, _ = call(m, ctx, "mcp_a_sleep", map[string]any{"ms": 600000})
		}()
	}
	eventually(t, 60*time.Second, "4 sleeps running at once", func() bool {
		return serverTraces(deps, testserver.TraceSleepStarted) == 4
	})
	for i := range 10 {
		for _, srv := range []string{"a", "b"} {
			r := mustCall(t, m, "mcp_"+srv+"_echo", map[string]any{"message": strconv.Itoa(i)})
			if r["result"] != strconv.Itoa(i) {
				t.Fatalf("echo beside the sleeps = %v", r)
			}
		}
	}
}

// Keepalive probes a live session at its interval without disturbing it:
// with ping before 2026-07-28, with server/discover in it (which has no
// ping). The server counts the probes it receives: one with a 50 ms
// interval gets several, while one with the default interval, connected
// for the same time, gets none past its connect, so they are the
// keepalive's.
func TestKeepalive(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ rev, trace string }{
		{session.Latest, testserver.TraceDiscover},
		{mcp.LATEST_LEGACY_PROTOCOL_VERSION, testserver.TracePing},
	} {
		t.Run(c.rev, func(t *testing.T) {
			deps, dir, _ := liveEnv(t)
			srv := tsServer(dir, "ts", "--trace")
			srv.KeepaliveInterval = 50 * time.Millisecond
			srv.Protocol = c.rev
			quietDeps := deps
			quietDeps.Home = t.TempDir() // its own server stderr log
			q := tsServer(dir, "quiet", "--trace")
			q.Protocol = c.rev
			quiet := startManager(t, registry.Options{Servers: []*config.Server{q}, Deps: quietDeps, Timings: fast()})
			m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
			s := m.SessionOf("ts")
			// The connect itself sends one server/discover.
			atConnect := serverTraces(quietDeps, c.trace)
			eventually(t, 10*time.Second, "three keepalive probes at the server", func() bool {
				return serverTraces(deps, c.trace) >= atConnect+3
			})
			if m.SessionOf("ts") != s || status(m, "ts").State != registry.StateConnected {
				t.Fatal("keepalive disturbed a healthy session")
			}
			if n := serverTraces(quietDeps, c.trace); n != atConnect || status(quiet, "quiet").State != registry.StateConnected {
				t.Fatalf("the server with the default keepalive interval got %d probes, %d at connect", n, atConnect)
			}
		})
	}
}

// Reload adds, removes and replaces servers and follows the new order.
func TestReload(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	a, b := tsServer(dir, "a"), tsServer(dir, "b")
	m := startManager(t, registry.Options{Servers: []*config.Server{a, b}, Deps: deps, Timings: fast()})
	b2 := tsServer(dir, "b")
	b2.Tools.Include = []string{"echo"}
	c := tsServer(dir, "c")
	res, err := m.Reload(context.Background(), []*config.Server{c, b2})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Added, ",") != "c" || strings.Join(res.Removed, ",") != "a" || strings.Join(res.Reconnected, ",") != "b" {
		t.Fatalf("reload = %+v", res)
	}
	got := names(m.Tools())
	hasAll(t, got, "mcp_c_echo", "mcp_b_echo")
	hasNone(t, got, "mcp_a_echo", "mcp_b_add")
	if st := m.Status(); len(st) != 2 || st[0].Name != "c" || st[1].Name != "b" {
		t.Fatalf("order after reload: %+v", st)
	}
}

func toJSON(v any) string {
	b, _ := jsonMarshal(v)
	return string(b)
}

// A server that stops answering fails the keepalive and is reconnected.
func TestKeepaliveFailureReconnects(t *testing.T) {
	t.Parallel()
	for _, rev := range []string{session.Latest, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		t.Run(rev, func(t *testing.T) { testKeepaliveFailureReconnects(t, rev) })
	}
}

func testKeepaliveFailureReconnects(t *testing.T, rev string) {
	deps, dir, logs := liveEnv(t)
	srv := tsServer(dir, "ts")
	srv.Protocol = rev
	srv.KeepaliveInterval = 100 * time.Millisecond
	tm := fast()
	// Long enough that a healthy server answers it on a loaded machine
	// (300 ms was not, with tests running side by side: a spurious
	// reconnect before the first call); the frozen one never answers.
	tm.ProbeTimeout = 2 * time.Second
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: tm})
	old := m.SessionOf("ts")
	pid := pidOf(t, m, "mcp_ts_pid")
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	eventually(t, 60*time.Second, "a new session", func() bool {
		s := m.SessionOf("ts")
		return s != nil && s != old
	})
	if got := pidOf(t, m, "mcp_ts_pid"); got == pid {
		t.Fatal("still the frozen server")
	}
	if !strings.Contains(logs.String(), "keepalive failed; reconnecting") {
		t.Error("keepalive failure not logged")
	}
}
