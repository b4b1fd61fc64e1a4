package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/hermes-agent/hermes/host/gateway"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/internal/benchfloor"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// echoBackend is an in-process upstream: its one tool answers its
// arguments.
type echoBackend struct{}

func (echoBackend) Tools() []gateway.Tool {
	return []gateway.Tool{{Name: "mcp_up_echo", Server: "up", Def: mcpvalue.Tool{Name: "echo",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)}}}
}

func (echoBackend) Call(_ context.Context, _ gateway.Person, _ gateway.Tool, args json.RawMessage) (mcpvalue.CallResult, error) {
	return mcpvalue.CallResult{Content: []mcpvalue.Content{mcpvalue.Text(string(args))}}, nil
}

// directEcho is the same tool on a plain mcp-go server: the call without
// the gateway.
func directEcho() *server.StreamableHTTPServer {
	s := server.NewMCPServer("direct", "1", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewToolWithRawSchema("mcp_up_echo", "", json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, _ := json.Marshal(r.Params.Arguments)
			return mcp.NewToolResultText(string(b)), nil
		})
	return server.NewStreamableHTTPServer(s)
}

func benchClient(b *testing.B, url, token, rev string) *client.Client {
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		b.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(rev))
	b.Cleanup(func() { _ = c.Close() })
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Initialize(context.Background(), mcp.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
	return c
}

// run makes b.N calls spread over the clients, each client calling in its
// own goroutine, and returns each call's latency.
func run(b *testing.B, clients []*client.Client, n int) []time.Duration {
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for _, c := range clients {
		wg.Go(func() {
			for i := range next {
				t0 := time.Now()
				res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_up_echo", Arguments: map[string]any{"message": "hi"}}})
				lat[i] = time.Since(t0)
				if err != nil || res.IsError {
					b.Errorf("call: %v %+v", err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	return lat
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkGatewayCall: tools/call echo through the gateway (identity,
// policy, audit off, session ids) against the same call to a plain mcp-go
// server in the same process, at 1, 16 and 64 concurrent clients, in each
// revision; the two sides alternate in rounds of b.N calls. Reported: the
// gateway's calls per second, the added latency at p50 and p99, and the
// ratio of the medians.
func BenchmarkGatewayCall(b *testing.B) {
	ids := sessionIDs(b)
	g, err := gateway.New(gateway.Options{Backend: echoBackend{}, Authenticate: staticTokens,
		Policy: devOrEcho(b), SessionIDs: ids, Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	gw := httptest.NewServer(g.Handler())
	b.Cleanup(gw.Close)
	direct := httptest.NewServer(directEcho())
	b.Cleanup(direct.Close)
	for _, rev := range []string{"2026-07-28", "2025-11-25"} {
		for _, conc := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/clients-%d", rev, conc), func(b *testing.B) {
				var gcs, dcs []*client.Client
				for range conc {
					gcs = append(gcs, benchClient(b, gw.URL+"/mcp", "token-of-alice", rev))
					dcs = append(dcs, benchClient(b, direct.URL+"/mcp", "", rev))
				}
				n := max(b.N, conc)
				b.ResetTimer()
				var glat, dlat []time.Duration
				var gtime time.Duration
				for round := range 2 {
					if round%2 == 0 {
						t0 := time.Now()
						glat = append(glat, run(b, gcs, n/2+1)...)
						gtime += time.Since(t0)
						dlat = append(dlat, run(b, dcs, n/2+1)...)
					} else {
						dlat = append(dlat, run(b, dcs, n/2+1)...)
						t0 := time.Now()
						glat = append(glat, run(b, gcs, n/2+1)...)
						gtime += time.Since(t0)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(len(glat))/gtime.Seconds(), "gateway-calls/s")
				b.ReportMetric(float64(pct(glat, 0.5)-pct(dlat, 0.5))/1e3, "added-p50-µs")
				b.ReportMetric(float64(pct(glat, 0.99)-pct(dlat, 0.99))/1e3, "added-p99-µs")
				benchfloor.Check(b, fmt.Sprintf("gateway call p50 (%s, %d clients): gateway / direct", rev, conc), "gateway/direct",
					float64(pct(glat, 0.5))/float64(pct(dlat, 0.5)), benchfloor.None)
			})
		}
	}
}

// BenchmarkGatewaySessionMemory: the gateway's heap per open 2025-11-25
// session. Each iteration initializes a session (and lists the tools in
// it) with a raw HTTP client, keeping nothing; the heap in use after a GC
// is compared before and after, per session. A self-contained session id
// keeps nothing of the gateway's, so this is what mcp-go keeps for a
// session initialized on this replica, until it has been idle for
// SessionIdleTTL; the second sub-benchmark waits for a short TTL's
// sweep and reports what is left.
func BenchmarkGatewaySessionMemory(b *testing.B) {
	b.Run("held", func(b *testing.B) { sessionMemory(b, 0) })
	b.Run("after-idle", func(b *testing.B) { sessionMemory(b, 200*time.Millisecond) })
}

// sessionMemory is BenchmarkGatewaySessionMemory with idle TTL ttl (0:
// the default, not waited for; else waited out before measuring).
func sessionMemory(b *testing.B, ttl time.Duration) {
	ids := sessionIDs(b)
	g, err := gateway.New(gateway.Options{Backend: echoBackend{}, Authenticate: staticTokens, Policy: devOrEcho(b), SessionIDs: ids, SessionIdleTTL: ttl})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	b.Cleanup(srv.Close)
	post := func(session, body string) string {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer token-of-alice")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusAccepted {
			b.Fatalf("HTTP %d", res.StatusCode)
		}
		return res.Header.Get("Mcp-Session-Id")
	}
	heap := func() uint64 {
		http.DefaultClient.CloseIdleConnections()
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	b.ResetTimer()
	for range b.N {
		sid := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
		post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	}
	b.StopTimer()
	after := heap()
	if ttl > 0 {
		// Wait for the sweeper (every ttl/2, at least 1 s) to drop the
		// sessions: the heap coming back to within 1 KB a session of where
		// it started; a minute bounds it, and what is left is reported.
		testwait.Until(time.Minute, func() bool {
			after = heap()
			return int64(after)-int64(before) < int64(b.N)<<10
		})
	}
	b.ReportMetric(float64(int64(after)-int64(before))/float64(b.N), "heap-B/session")
	b.ReportMetric(float64(after)/1e6, "heap-MB-after")
}
