package session_test

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/benchfloor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkHTTPCallTool measures one tools/call of echo against the test
// server over loopback: direct is mcp-go's Streamable HTTP client in this
// process; plugin is the same call through session.Connect and the HTTP
// transport plugin. Both are connected at once and each iteration calls
// both, in alternating order, so that both see the same machine; the
// benchmark reports the median call of each and their ratio.
func BenchmarkHTTPCallTool(b *testing.B) {
	req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "bench"}}}
	benchHTTP(b, req, 20, "HTTP tools/call echo", 1.2)
}

// BenchmarkHTTPCallTool1MiB is BenchmarkHTTPCallTool with a result of 1 MiB
// (the test server's huge tool).
func BenchmarkHTTPCallTool1MiB(b *testing.B) {
	req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "huge", Arguments: map[string]any{"bytes": 1 << 20}}}
	benchHTTP(b, req, 5, "HTTP tools/call 1 MiB", 1.05)
}

// benchHTTP measures req both ways, warm calls first, and checks the
// ratio against floor under name (with the revision).
func benchHTTP(b *testing.B, req mcp.CallToolRequest, warm int, name string, floor float64) {
	dir := testbin.Dir(b)
	b.Setenv("HERMES_PLUGIN_PATH", dir)
	cmd := exec.Command(filepath.Join(dir, "hermes-testserver"), "--http", "127.0.0.1:0")
	p := startListening(b, cmd, "listening on ")
	url := p.URL + "/mcp"
	ctx := context.Background()

	for _, rev := range []string{session.Latest, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		b.Run(rev, func(b *testing.B) {
			opts := []transport.StreamableHTTPCOption{transport.WithHTTPLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
			if !mcp.IsModernProtocol(rev) {
				// What hermes does in a legacy revision: keep the GET stream.
				opts = append(opts, transport.WithContinuousListening())
			}
			tr, err := transport.NewStreamableHTTP(url, opts...)
			if err != nil {
				b.Fatal(err)
			}
			direct := client.NewClient(tr, client.WithProtocolVersion(rev))
			defer direct.Close()
			if err := direct.Start(ctx); err != nil {
				b.Fatal(err)
			}
			if _, err := direct.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
				ProtocolVersion: rev, ClientInfo: mcp.Implementation{Name: "bench", Version: "1"}}}); err != nil {
				b.Fatal(err)
			}
			if got := direct.ProtocolVersion(); got != rev {
				b.Fatalf("negotiated %s, want %s", got, rev)
			}

			home := b.TempDir()
			sup := supervisor.New(supervisor.Options{Home: home})
			defer sup.KillAll()
			srv := remote("http", url)
			srv.ConnectTimeout = 30 * time.Second
			srv.Protocol = rev
			s, err := session.Connect(ctx, session.PlanFor(srv, home, nil), session.Deps{Home: home, Supervisor: sup})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()

			clients := [2]*client.Client{direct, s.Client}
			call := func(c *client.Client) {
				if _, err := c.CallTool(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			for _, c := range clients {
				for range warm {
					call(c)
				}
			}
			var took [2][]time.Duration
			i := 0
			for b.Loop() {
				for k := range 2 {
					j := (i + k) % 2 // alternate which path goes first
					t0 := time.Now()
					call(clients[j])
					took[j] = append(took[j], time.Since(t0))
				}
				i++
			}
			if i == 0 {
				return
			}
			d, pl := medianOf(took[0]), medianOf(took[1])
			b.ReportMetric(float64(d.Microseconds()), "direct-us/call")
			b.ReportMetric(float64(pl.Microseconds()), "plugin-us/call")
			benchfloor.Check(b, name+" ("+rev+"): plugin / direct", "plugin/direct", float64(pl)/float64(d), floor)
		})
	}
}

func medianOf(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
