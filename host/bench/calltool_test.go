package bench_test

import (
	"context"
	"github.com/hermes-agent/hermes/internal/testproc"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

var (
	echoReq = mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}}}
	hugeReq = mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "huge", Arguments: map[string]any{"bytes": 1 << 20}}}
)

// revisions are the protocol revisions the benchmarks compare: the
// stateless current one and the newest with the initialize handshake.
var revisions = []string{session.Latest, mcp.LATEST_LEGACY_PROTOCOL_VERSION}

// BenchmarkCallTool compares one tools/call of echo to the Go test server
// over stdio, in each protocol revision. direct is mcp-go's client with
// mcp-go's own stdio transport in this process; plugin is the same client
// through hermes-transport-stdio, as hermes runs it (session.Connect). Both
// speak the same revision. Each iteration makes one call on each path, in
// alternating order, so that both see the same machine; ns/op is that pair,
// direct-ns/op and plugin-ns/op are the median call of each path, and
// direct-server-cpu-us/call and plugin-server-cpu-us/call the CPU time of
// the server behind each path per call (both servers do the same work;
// /proc counts it in 10 ms ticks).
func BenchmarkCallTool(b *testing.B) {
	for _, rev := range revisions {
		b.Run(rev, func(b *testing.B) {
			benchCall(b, rev, echoReq, 200, "tools/call echo ("+rev+"): plugin / direct", 1.5)
		})
	}
}

// BenchmarkCallTool1MiB is BenchmarkCallTool with a 1 MiB text result
// (the test server's huge tool); plugin-RSS-MB is the plugin's resident
// memory after those calls.
func BenchmarkCallTool1MiB(b *testing.B) {
	for _, rev := range revisions {
		b.Run(rev, func(b *testing.B) {
			benchCall(b, rev, hugeReq, 10, "tools/call 1 MiB ("+rev+"): plugin / direct", 1.1)
		})
	}
}

func benchCall(b *testing.B, rev string, req mcp.CallToolRequest, warm int, floorName string, floor float64) {
	dir := bins(b)
	server := filepath.Join(dir, "hermes-testserver")
	direct := directClient(b, server, rev)
	s := pluginSession(b, dir, server, rev)
	clients := [2]*client.Client{direct, s.Client}
	var pids [2]int
	for j, c := range clients {
		pids[j] = serverPid(b, c)
		for range warm {
			call(b, c, req)
		}
	}
	// The plugin's server says its pid in its own pid namespace.
	if p := testproc.Below(s.Plugin.Pid(), pids[1]); p > 0 {
		pids[1] = p
	}
	var took [2][]time.Duration
	var cpu0 [2]time.Duration
	for j, pid := range pids {
		cpu0[j] = procCPU(pid)
	}
	i := 0
	for b.Loop() {
		for k := range 2 {
			j := (i + k) % 2 // alternate which path goes first
			t0 := time.Now()
			call(b, clients[j], req)
			took[j] = append(took[j], time.Since(t0))
		}
		i++
	}
	if i > 0 {
		for j, name := range [2]string{"direct", "plugin"} {
			if c := procCPU(pids[j]) - cpu0[j]; c > 0 {
				b.ReportMetric(float64(c.Microseconds())/float64(i), name+"-server-cpu-us/call")
			}
		}
	}
	d, p := median(took[0]), median(took[1])
	b.ReportMetric(float64(d.Nanoseconds()), "direct-ns/op")
	b.ReportMetric(float64(p.Nanoseconds()), "plugin-ns/op")
	checkFloor(b, floorName, "plugin/direct", float64(p)/float64(d), floor)
	if rss := rssMB(s.Plugin.Pid()); rss > 0 {
		b.ReportMetric(rss, "plugin-RSS-MB")
	}
}

func call(b *testing.B, c *client.Client, req mcp.CallToolRequest) {
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	if res.IsError {
		b.Fatalf("%s: error result %v", req.Params.Name, res.Content)
	}
}

// serverPid asks the test server behind c for its process id (its pid
// tool).
func serverPid(b *testing.B, c *client.Client) int {
	res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "pid"}})
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Content) == 1 {
		if t, ok := res.Content[0].(mcp.TextContent); ok {
			if pid, err := strconv.Atoi(strings.TrimSpace(t.Text)); err == nil {
				return pid
			}
		}
	}
	b.Fatalf("pid tool: %v", res.Content)
	return 0
}

// BenchmarkCallToolParallel is the plugin path of BenchmarkCallTool with 8
// calls in flight, in each protocol revision; ns/op is wall time per call.
func BenchmarkCallToolParallel(b *testing.B) {
	for _, rev := range revisions {
		b.Run(rev, func(b *testing.B) {
			dir := bins(b)
			s := pluginSession(b, dir, filepath.Join(dir, "hermes-testserver"), rev)
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.Client.CallTool(context.Background(), echoReq); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// directClient is mcp-go's client on its own stdio transport, initialized
// in revision rev.
func directClient(b *testing.B, server, rev string) *client.Client {
	ctx := context.Background()
	c := client.NewClient(transport.NewStdio(server, nil), client.WithProtocolVersion(rev))
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: rev,
		ClientInfo: mcp.Implementation{Name: "bench", Version: "1"}}}); err != nil {
		b.Fatal(err)
	}
	if got := c.ProtocolVersion(); got != rev {
		b.Fatalf("direct client speaks %s, want %s", got, rev)
	}
	return c
}

// pluginSession is a session to server through hermes-transport-stdio, as
// hermes connects one, pinned to revision rev.
func pluginSession(b *testing.B, dir, server, rev string) *session.Session {
	b.Setenv("HERMES_PLUGIN_PATH", dir)
	home := b.TempDir()
	sup := supervisor.New(supervisor.Options{Home: home})
	b.Cleanup(sup.KillAll)
	s := connect(b, sup, home, server, rev)
	b.Cleanup(func() { s.Close() })
	return s
}

// connect connects a session to server through sup, in revision rev (""
// negotiates); the caller closes it.
func connect(b *testing.B, sup *supervisor.Supervisor, home, server, rev string) *session.Session {
	srv := &config.Server{Name: "bench", Transport: "stdio", Command: server,
		Enabled: true, ConnectTimeout: 20 * time.Second, Timeout: time.Minute, Protocol: rev}
	s, err := session.Connect(context.Background(), session.PlanFor(srv, home, nil), session.Deps{Home: home, Supervisor: sup})
	if err != nil {
		b.Fatal(err)
	}
	return s
}
