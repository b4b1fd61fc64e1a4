// Command oneshotclient is the floor of the one-shot benchmarks: the least a
// Go program using mcp-go does to call one tool of a stdio server. It starts
// the server (its arguments are the server's command line), connects, calls
// echo, prints the result text, kills the server and exits.
//
//	oneshotclient [-protocol REV] COMMAND [ARG]...
//
// Without -protocol it sends initialize asking for the newest legacy
// revision (2025-11-25) and takes the one the server answers with. With
// -protocol REV it speaks exactly REV, as hermes does with a pinned
// protocol key: 2026-07-28 through server/discover, an older revision
// through initialize; a server that ends up on another revision is an
// error.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	pinned := flag.String("protocol", "", "speak exactly this MCP revision (default: initialize asking for "+mcp.LATEST_LEGACY_PROTOCOL_VERSION+")")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: oneshotclient [-protocol REV] COMMAND [ARG]...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}
	rev := *pinned
	if rev == "" {
		rev = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	}
	var server *exec.Cmd
	tr := transport.NewStdioWithOptions(flag.Arg(0), nil, flag.Args()[1:],
		transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			server = exec.Command(command, args...)
			return server, nil
		}))
	ctx := context.Background()
	// A revision before 2026-07-28 keeps mcp-go on initialize; 2026-07-28
	// makes Initialize send server/discover.
	c := client.NewClient(tr, client.WithProtocolVersion(rev))
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
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: rev,
		ClientInfo: mcp.Implementation{Name: "oneshotclient", Version: "1"}}}); err != nil {
		fail(err)
	}
	if got := c.ProtocolVersion(); *pinned != "" && got != rev {
		fail(fmt.Errorf("the server speaks %s, not the revision asked for, %s", got, rev))
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
