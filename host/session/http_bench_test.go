package session_test

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkHTTPCallTool measures one tools/call of echo against the test
// server over loopback: direct is mcp-go's Streamable HTTP client in this
// process; plugin is the same call through session.Connect and the HTTP
// transport plugin.
func BenchmarkHTTPCallTool(b *testing.B) {
	dir := testbin.Dir(b)
	b.Setenv("HERMES_PLUGIN_PATH", dir)
	cmd := exec.Command(filepath.Join(dir, "hermes-testserver"), "--http", "127.0.0.1:0")
	p := startListening(b, cmd, "listening on ")
	url := p.URL + "/mcp"
	req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "bench"}}}
	ctx := context.Background()

	for _, rev := range []string{session.Latest, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		b.Run("direct/"+rev, func(b *testing.B) {
			opts := []transport.StreamableHTTPCOption{transport.WithHTTPLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
			if !mcp.IsModernProtocol(rev) {
				// What hermes does in a legacy revision: keep the GET stream.
				opts = append(opts, transport.WithContinuousListening())
			}
			tr, err := transport.NewStreamableHTTP(url, opts...)
			if err != nil {
				b.Fatal(err)
			}
			c := client.NewClient(tr, client.WithProtocolVersion(rev))
			defer c.Close()
			if err := c.Start(ctx); err != nil {
				b.Fatal(err)
			}
			if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
				ProtocolVersion: rev, ClientInfo: mcp.Implementation{Name: "bench", Version: "1"}}}); err != nil {
				b.Fatal(err)
			}
			if got := c.ProtocolVersion(); got != rev {
				b.Fatalf("negotiated %s, want %s", got, rev)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.CallTool(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})

		b.Run("plugin/"+rev, func(b *testing.B) {
			home := b.TempDir()
			sup := supervisor.New(supervisor.Options{Home: home})
			defer sup.KillAll()
			srv := remote("http", url)
			srv.ConnectTimeout = 30 * time.Second
			srv.Protocol = rev
			s, err := session.Connect(ctx, srv, session.Deps{Home: home, Supervisor: sup})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Client.CallTool(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
