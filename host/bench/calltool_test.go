package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

var echoReq = mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}}}

// BenchmarkCallTool compares one tools/call to the Go test server over
// stdio: direct is mcp-go's client in-process with its own stdio transport;
// plugin is the same client through hermes-transport-stdio, as hermes runs
// it. Both use the protocol version hermes uses.
func BenchmarkCallTool(b *testing.B) {
	dir := testbin.Dir(b)
	server := filepath.Join(dir, "hermes-testserver")
	ctx := context.Background()

	b.Run("direct", func(b *testing.B) {
		tr := transport.NewStdio(server, nil)
		c := client.NewClient(tr, client.WithProtocolVersion(session.ProtocolVersion))
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: session.ProtocolVersion,
			ClientInfo: mcp.Implementation{Name: "bench", Version: "1"}}}); err != nil {
			b.Fatal(err)
		}
		runCalls(b, c)
	})

	b.Run("plugin", func(b *testing.B) {
		s := pluginSession(b, dir, server)
		defer s.Close()
		runCalls(b, s.Client)
		if rss := rssMB(s.Plugin.Pid()); rss > 0 {
			b.ReportMetric(rss, "plugin-RSS-MB")
		}
	})
}

// BenchmarkCallToolParallel is BenchmarkCallTool with 8 calls in flight.
func BenchmarkCallToolParallel(b *testing.B) {
	dir := testbin.Dir(b)
	server := filepath.Join(dir, "hermes-testserver")
	b.Run("plugin", func(b *testing.B) {
		s := pluginSession(b, dir, server)
		defer s.Close()
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

// BenchmarkPluginStart measures starting hermes-transport-stdio up to a
// dispensed, ready transport handle, and killing it.
func BenchmarkPluginStart(b *testing.B) {
	dir := testbin.Dir(b)
	b.Setenv("HERMES_PLUGIN_PATH", dir)
	sup := supervisor.New(supervisor.Options{Home: b.TempDir()})
	defer sup.KillAll()
	var startTotal time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		p, err := sup.Launch(session.TransportSpec(&config.Server{Name: "bench", Transport: "stdio"}))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Dispense(); err != nil {
			b.Fatal(err)
		}
		startTotal += time.Since(t0)
		p.Kill()
	}
	b.ReportMetric(float64(startTotal.Microseconds())/float64(b.N)/1000, "start-ms")
}

func pluginSession(b *testing.B, dir, server string) *session.Session {
	b.Setenv("HERMES_PLUGIN_PATH", dir)
	home := b.TempDir()
	sup := supervisor.New(supervisor.Options{Home: home})
	b.Cleanup(sup.KillAll)
	s, err := session.Connect(context.Background(), &config.Server{Name: "bench", Transport: "stdio", Command: server,
		Enabled: true, ConnectTimeout: 20 * time.Second, Timeout: time.Minute}, session.Deps{Home: home, Supervisor: sup})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func runCalls(b *testing.B, c *client.Client) {
	ctx := context.Background()
	for range 200 { // warm up
		if _, err := c.CallTool(ctx, echoReq); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.CallTool(ctx, echoReq); err != nil {
			b.Fatal(err)
		}
	}
}

// rssMB reads a process's resident set size.
func rssMB(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseFloat(f[1], 64)
				return kb / 1024
			}
		}
	}
	return 0
}
