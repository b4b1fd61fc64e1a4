package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/mark3labs/mcp-go/mcp"
)

func deps(t *testing.T) (session.Deps, string) {
	t.Helper()
	dir := testbin.Dir(t)
	t.Setenv("HERMES_PLUGIN_PATH", dir)
	home := t.TempDir()
	sup := supervisor.New(supervisor.Options{Home: home})
	t.Cleanup(sup.KillAll)
	return session.Deps{Home: home, Supervisor: sup}, dir
}

func testServer(t *testing.T, dir string, args ...string) *config.Server {
	return &config.Server{
		Name: "ts", Transport: "stdio", Command: filepath.Join(dir, "hermes-testserver"), Args: args,
		Enabled: true, ConnectTimeout: 10 * time.Second, Timeout: 30 * time.Second,
	}
}

func TestConnectAndCall(t *testing.T) {
	d, dir := deps(t)
	s, err := session.Connect(context.Background(), testServer(t, dir), d)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Init.ServerInfo.Name != "hermes-testserver" {
		t.Fatalf("server name %q", s.Init.ServerInfo.Name)
	}
	res, err := s.Client.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi there"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(mcp.TextContent).Text; got != "hi there" {
		t.Fatalf("echo = %q", got)
	}
	_ = os.Getpid
	_ = strings.Contains
}
