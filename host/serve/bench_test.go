package serve_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
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
// answered by a handler in the host process, alternating one with the
// other so both see the same machine. It reports the median of each
// (plugin-us, in-process-us) and their ratio: the plugin hop's cost; and
// the 90th percentile of each (plugin-p90-us, in-process-p90-us), where
// the waits for a busy machine to schedule the plugin process show.
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
	var plugin, local []time.Duration
	for b.Loop() {
		plugin = append(plugin, call(viaPlugin))
		local = append(local, call(inProc))
	}
	p, l := median(plugin), median(local)
	b.ReportMetric(float64(p.Microseconds()), "plugin-us")
	b.ReportMetric(float64(l.Microseconds()), "in-process-us")
	b.ReportMetric(float64(quantile(plugin, 0.9).Microseconds()), "plugin-p90-us")
	b.ReportMetric(float64(quantile(local, 0.9).Microseconds()), "in-process-p90-us")
	benchfloor.Check(b, "serve hop: bridge plugin / in-process", "ratio", float64(p)/float64(l), 2)
}

func median(d []time.Duration) time.Duration { return quantile(d, 0.5) }

// quantile returns the q-quantile of d (0 ≤ q < 1), nearest rank.
func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s))*q)]
}
