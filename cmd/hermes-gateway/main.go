// Command hermes-gateway is `hermes mcp gateway`: the config's servers
// served to a team as one MCP endpoint (docs/GATEWAY.md). It is a binary of
// its own so that what only the gateway needs is not loaded by every other
// hermes command; hermes runs it for `hermes mcp gateway`, and a container
// runs it as its entrypoint.
package main

import (
	"os"

	"github.com/hermes-agent/hermes/host/cli"
	"github.com/hermes-agent/hermes/host/cli/mcp/gatewaycmd"
)

func main() {
	os.Exit(cli.MainRoot(os.Args, os.Stdin, os.Stdout, os.Stderr, gatewaycmd.Root))
}
