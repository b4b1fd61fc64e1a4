// Command oneshotclient is the floor of the one-shot benchmark: the least a
// Go program using mcp-go does to call one tool of a stdio server. It starts
// the server (its arguments are the server's command line), initializes,
// calls echo, prints the result text, kills the server and exits.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// protocolVersion is the one hermes asks for.
const protocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: oneshotclient COMMAND [ARG]...")
		os.Exit(2)
	}
	var server *exec.Cmd
	tr := transport.NewStdioWithOptions(os.Args[1], nil, os.Args[2:],
		transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			server = exec.Command(command, args...)
			return server, nil
		}))
	ctx := context.Background()
	c := client.NewClient(tr, client.WithProtocolVersion(protocolVersion))
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "oneshotclient:", err)
		if server != nil && server.Process != nil {
			_ = server.Process.Kill()
		}
		os.Exit(1)
	}
	if err := c.Start(ctx); err != nil {
		fail(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: protocolVersion,
		ClientInfo: mcp.Implementation{Name: "oneshotclient", Version: "1"}}}); err != nil {
		fail(err)
	}
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "echo",
		Arguments: map[string]any{"message": "hi"}}})
	if err != nil {
		fail(err)
	}
	for _, content := range res.Content {
		if t, ok := content.(mcp.TextContent); ok {
			fmt.Println(t.Text)
		}
	}
	_ = server.Process.Kill()
}
