package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/sdktest"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestMain doubles as a tiny MCP server: run with EXAMPLE_SERVE=1, this test
// binary serves one echo tool over stdio.
func TestMain(m *testing.M) {
	if os.Getenv("EXAMPLE_SERVE") == "1" {
		s := server.NewMCPServer("example-echo", "1.0.0")
		s.AddTool(mcp.NewTool("echo", mcp.WithString("message", mcp.Required())),
			func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(r.GetString("message", "")), nil
			})
		_ = server.ServeStdio(s)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The example plugin, built and run as its own process, carries a real tool
// call to a real stdio server.
func TestExamplePluginEndToEnd(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hermes-transport-mcpgostdio")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build example: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tr := sdktest.DialTransport(t, bin, sdk.TransportConfig{
		Server: "example", Transport: "mcpgostdio", Command: self,
		Env: []string{"EXAMPLE_SERVE=1", "PATH=" + os.Getenv("PATH")},
	}, sdk.ClientOptions{})
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION, ClientInfo: mcp.Implementation{Name: "test", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "through a third-party plugin"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(mcp.TextContent).Text; got != "through a third-party plugin" {
		t.Fatalf("echo = %q", got)
	}
}

// A config error from the factory reaches the host with its code.
func TestExamplePluginConfigError(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hermes-transport-mcpgostdio")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build example: %v\n%s", err, out)
	}
	// DialTransport fails the test on an open error, so open by hand here.
	cfg := sdk.TransportConfig{Server: "example", Transport: "mcpgostdio"}
	err := openOnly(t, bin, cfg)
	if sdk.ErrorCode(err) != sdk.CodeConfig {
		t.Fatalf("want a config error, got %v", err)
	}
}
