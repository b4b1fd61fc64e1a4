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

	b.Run("direct", func(b *testing.B) {
		tr, err := transport.NewStreamableHTTP(url, transport.WithContinuousListening(),
			transport.WithHTTPLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		if err != nil {
			b.Fatal(err)
		}
		c := client.NewClient(tr, client.WithProtocolVersion(session.ProtocolVersion))
		defer c.Close()
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
			ProtocolVersion: session.ProtocolVersion, ClientInfo: mcp.Implementation{Name: "bench", Version: "1"}}}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := c.CallTool(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("plugin", func(b *testing.B) {
		home := b.TempDir()
		sup := supervisor.New(supervisor.Options{Home: home})
		defer sup.KillAll()
		srv := remote("http", url)
		srv.ConnectTimeout = 30 * time.Second
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
