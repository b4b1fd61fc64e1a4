package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/serve"
	"github.com/hermes-agent/hermes/internal/benchfloor"
	"github.com/hermes-agent/hermes/sdk/bridge"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// inProcess is a Caller that answers echo in the host process: the
// baseline the bridge plugin's hop is measured against.
type inProcess struct{}

func (inProcess) Call(_ context.Context, _ string, args json.RawMessage) (bridge.Result, error) {
	return bridge.Result{Text: string(args), Structured: args}, nil
}

// callClient connects an mcp-go client over loopback streamable HTTP
// (through the token and Origin checks) to the MCP server s.
func callClient(b *testing.B, ctx context.Context, s *server.MCPServer) *client.Client {
	ts := httptest.NewServer(serve.Handler(s, serve.HTTPOptions{Token: token, MaxRequestBytes: 1 << 20}))
	b.Cleanup(ts.Close)
	c, err := client.NewStreamableHttpClient(ts.URL+serve.EndpointPath, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkServeCallTool: a tool call through hermes mcp serve's HTTP
// endpoint answered by the bridge plugin process, against the same call
// answered by a handler in the host process, in alternating runs of
// serveRun calls of each, so both see the same machine. It reports the
// median of each (plugin-us, in-process-us) and their ratio: the plugin
// hop's cost; and the 90th percentile of each (plugin-p90-us,
// in-process-p90-us), where the waits for a busy machine to schedule the
// plugin process show. An iteration makes two calls on one path; b.N
// iterations make b.N calls on each.
func BenchmarkServeCallTool(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	br := startFakeB(b, b.TempDir())
	viaPlugin := callClient(b, ctx, serve.NewServer(br.Description(), br, serve.ServerOptions{Version: "bench"}))
	desc := bridge.Description{Name: "fake", Tools: []bridge.Tool{{Name: "echo", Description: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	inProc := callClient(b, ctx, serve.NewServer(desc, inProcess{}, serve.ServerOptions{Version: "bench"}))
	var req mcp.CallToolRequest
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"session_key": "agent:main:telegram:dm:123456", "limit": 50}
	call := func(c *client.Client) time.Duration {
		start := time.Now()
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			b.Fatalf("call: %+v %v", res, err)
		}
		return time.Since(start)
	}
	// A call right after one of the other kind finds the host's threads
	// as the other left them (awake and spinning after the in-process
	// call, asleep after the plugin's wait): its time says as much about
	// the other as about itself. So the two alternate in runs, and the
	// first call of each run is not counted.
	var plugin, local []time.Duration
	for i := 0; b.Loop(); i++ {
		c, out := viaPlugin, &plugin
		if (i/(serveRun/2))%2 == 1 {
			c, out = inProc, &local
		}
		first := call(c)
		if i%(serveRun/2) != 0 {
			*out = append(*out, first)
		}
		*out = append(*out, call(c))
	}
	p, l := median(plugin), median(local)
	b.ReportMetric(float64(p.Microseconds()), "plugin-us")
	b.ReportMetric(float64(l.Microseconds()), "in-process-us")
	b.ReportMetric(float64(quantile(plugin, 0.9).Microseconds()), "plugin-p90-us")
	b.ReportMetric(float64(quantile(local, 0.9).Microseconds()), "in-process-p90-us")
	benchfloor.Check(b, "serve hop: bridge plugin / in-process", "ratio", float64(p)/float64(l), 2)
}

// serveRun is the number of calls BenchmarkServeCallTool makes in a row
// on one path (even).
const serveRun = 8

func median(d []time.Duration) time.Duration { return quantile(d, 0.5) }

// quantile returns the q-quantile of d (0 ≤ q < 1), nearest rank.
func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s))*q)]
}

// BenchmarkBridgeCall: the bridge plugin's hop alone, Bridge.Call (no MCP,
// no HTTP) with the arguments BenchmarkServeCallTool sends, one call at a
// time. It reports the median round trip (hop-us) and its 90th percentile,
// and per call, from the kernel's accounting of every thread of each
// process (Linux): the CPU time of the host (host-cpu-us) and of the plugin
// (plugin-cpu-us), the times their threads were put on a CPU (host-wakes,
// plugin-wakes: wake-ups plus preemptions) and the time they waited for
// one once runnable (host-wait-us, plugin-wait-us), which is what a loaded
// machine adds.
func BenchmarkBridgeCall(b *testing.B) {
	ctx := context.Background()
	br := startFakeB(b, b.TempDir())
	args := json.RawMessage(`{"limit":50,"session_key":"agent:main:telegram:dm:123456"}`)
	d := make([]time.Duration, 0, b.N)
	host0, hostOK := threadStats(os.Getpid())
	plugin0, pluginOK := threadStats(br.Pid())
	for b.Loop() {
		start := time.Now()
		if _, err := br.Call(ctx, "echo", args); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	host1, _ := threadStats(os.Getpid())
	plugin1, _ := threadStats(br.Pid())
	b.ReportMetric(float64(median(d).Microseconds()), "hop-us")
	b.ReportMetric(float64(quantile(d, 0.9).Microseconds()), "hop-p90-us")
	n := float64(len(d))
	if hostOK {
		host1.report(b, host0, n, "host")
	}
	if pluginOK {
		plugin1.report(b, plugin0, n, "plugin")
	}
}

// schedStats sums the kernel's scheduler accounting over a process's
// threads (/proc/PID/task/*/schedstat).
type schedStats struct {
	cpu, wait time.Duration // on a CPU; runnable, waiting for one
	slices    int64         // times put on a CPU
}

// threadStats reads the schedStats of process pid; false where the kernel
// does not keep them.
func threadStats(pid int) (schedStats, bool) {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var s schedStats
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue // the thread exited
		}
		var cpu, wait, slices int64
		if _, err := fmt.Sscan(string(raw), &cpu, &wait, &slices); err != nil {
			return schedStats{}, false
		}
		s.cpu += time.Duration(cpu)
		s.wait += time.Duration(wait)
		s.slices += slices
	}
	return s, len(files) > 0
}

// report reports what s added since before, per call of n, as
// <who>-cpu-us, <who>-wait-us and <who>-wakes.
func (s schedStats) report(b *testing.B, before schedStats, n float64, who string) {
	b.ReportMetric(float64((s.cpu-before.cpu).Microseconds())/n, who+"-cpu-us")
	b.ReportMetric(float64((s.wait-before.wait).Microseconds())/n, who+"-wait-us")
	b.ReportMetric(float64(s.slices-before.slices)/n, who+"-wakes")
}
