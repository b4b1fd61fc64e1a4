package bench_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testnpm"
	"github.com/hermes-agent/hermes/internal/testproc"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkLazy compares, side by side in one run, a long-lived session of
// ten servers whose records of what they offered are fresh, started lazily
// (registry Options.Lazy) and eagerly (every server connected at Start),
// that calls one tool of one server:
//
//   - start-ms: registry.New and Start until the tools are registered
//     (the first prompt could go out);
//   - tree-MB: the resident memory of the plugins and servers (the
//     benchmark process's descendants), summed, sampled when the tools are
//     registered and after the call, the larger of the two; host-MB is
//     the benchmark process's own (the host's registry and sessions, and
//     the test binary) after the call;
//   - call-ms: that first call; for lazy it starts the server's plugin and
//     the server, for eager the server is running. running-call-ms is a
//     second call of the same tool (running, either way).
//
// Sub-benchmarks: the Go test server (testserver) and, where the npm
// packages are installed, server-everything (everything).
func BenchmarkLazy(b *testing.B) {
	dir := bins(b)
	b.Setenv("HERMES_PLUGIN_PATH", dir)
	ts := filepath.Join(dir, "hermes-testserver")
	b.Run("testserver", func(b *testing.B) {
		lazyBench(b, func(i int) (string, []string) { return ts, nil }, "echo", map[string]any{"message": "hi"})
	})
	b.Run("everything", func(b *testing.B) {
		node, script := testnpm.Server(b, "@modelcontextprotocol/server-everything")
		lazyBench(b, func(i int) (string, []string) { return node, []string{script, "stdio"} }, "echo", map[string]any{"message": "hi"})
	})
}

const lazyServers = 10

func lazyBench(b *testing.B, launch func(i int) (string, []string), tool string, args map[string]any) {
	raw, err := json.Marshal(args)
	if err != nil {
		b.Fatal(err)
	}
	home := b.TempDir()
	sup := supervisor.New(supervisor.Options{Home: home})
	defer sup.KillAll()
	deps := session.Deps{Home: home, Supervisor: sup}
	servers := make([]*config.Server, lazyServers)
	for i := range servers {
		cmd, argv := launch(i)
		servers[i] = &config.Server{
			Name: "s" + strconv.Itoa(i), Transport: "stdio", Command: cmd, Args: argv,
			Enabled: true, ConnectTimeout: 60 * time.Second, Timeout: 60 * time.Second,
			KeepaliveInterval: config.DefaultKeepaliveInterval,
			Tools:             config.ToolsFilter{Resources: true, Prompts: true},
		}
	}
	store := offered.Open(home, nil)
	for _, srv := range servers {
		writeRecord(b, deps, store, srv)
	}
	name := "mcp_s0_" + tool
	type run struct {
		start, call, again time.Duration
		tree, host         float64
	}
	session1 := func(lazy bool) run {
		var r run
		t0 := time.Now()
		m := registry.New(registry.Options{Servers: servers, Deps: deps, Lazy: lazy, Records: registry.RecordsFrom(store)})
		if err := m.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		r.start = time.Since(t0)
		if _, ok := m.Tool(name); !ok || len(m.Tools()) < lazyServers {
			b.Fatalf("tools not registered: %d", len(m.Tools()))
		}
		r.tree = treeMB()
		t0 = time.Now()
		if out, err := m.Call(context.Background(), name, raw); err != nil {
			b.Fatalf("%s: %v %s", name, err, out.Text)
		}
		r.call = time.Since(t0)
		t0 = time.Now()
		if _, err := m.Call(context.Background(), name, raw); err != nil {
			b.Fatal(err)
		}
		r.again = time.Since(t0)
		r.tree = max(r.tree, treeMB())
		r.host = rssMB(os.Getpid())
		m.Close()
		waitNoChildren(b)
		return r
	}
	var lazy, eager []run
	for b.Loop() {
		lazy = append(lazy, session1(true))
		eager = append(eager, session1(false))
	}
	pick := func(rs []run, f func(run) float64) float64 {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		return median(xs)
	}
	b.ReportMetric(pick(lazy, func(r run) float64 { return ms(r.start) }), "lazy-start-ms")
	b.ReportMetric(pick(eager, func(r run) float64 { return ms(r.start) }), "eager-start-ms")
	b.ReportMetric(pick(lazy, func(r run) float64 { return r.tree }), "lazy-tree-MB")
	checkFloor(b, "lazy session tree / eager ("+b.Name()[strings.LastIndex(b.Name(), "/")+1:]+")", "lazy/eager-tree",
		pick(lazy, func(r run) float64 { return r.tree })/pick(eager, func(r run) float64 { return r.tree }), 0.2)
	b.ReportMetric(pick(eager, func(r run) float64 { return r.tree }), "eager-tree-MB")
	b.ReportMetric(pick(lazy, func(r run) float64 { return r.host }), "lazy-host-MB")
	b.ReportMetric(pick(eager, func(r run) float64 { return r.host }), "eager-host-MB")
	b.ReportMetric(pick(lazy, func(r run) float64 { return ms(r.call) }), "lazy-first-call-ms")
	b.ReportMetric(pick(eager, func(r run) float64 { return ms(r.call) }), "eager-first-call-ms")
	b.ReportMetric(pick(append(lazy, eager...), func(r run) float64 { return ms(r.again) }), "running-call-ms")
}

// writeRecord connects srv once and stores what it offered, as the
// registry does on every connection.
func writeRecord(b *testing.B, deps session.Deps, store *offered.Store, srv *config.Server) {
	b.Helper()
	sess, err := session.Connect(context.Background(), session.PlanFor(srv, deps.Home, deps.Environ), deps)
	if err != nil {
		b.Fatalf("connect %s: %v", srv.Name, err)
	}
	defer sess.Close()
	res, err := sess.Client.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		b.Fatal(err)
	}
	rec := &offered.Record{Server: srv.Name, SettingsDigest: offered.SettingsDigest(srv), Capabilities: sess.Capabilities(),
		Tools: session.ToolValues(res.Tools), Protocol: sess.Revision(), ServerInfo: sess.ServerInfo()}
	if err := store.Save(rec); err != nil {
		b.Fatal(err)
	}
}

// treeMB sums the resident memory of this process's descendants.
func treeMB() float64 {
	sum := 0.0
	for _, pid := range testproc.Descendants(os.Getpid()) {
		sum += rssMB(pid)
	}
	return sum
}

// waitNoChildren waits until the plugins and servers of a session ended,
// so the next session's figures are its own.
func waitNoChildren(b *testing.B) {
	testwait.For(b, 60*time.Second, "the plugins and servers to end after Close", func() bool {
		return len(testproc.Descendants(os.Getpid())) == 0
	})
}
