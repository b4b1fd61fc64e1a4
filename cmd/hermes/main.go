// Command hermes is the Hermes MCP host: it connects an agent to MCP servers,
// each through its own plugin process, and manages those servers from the
// command line. All logic lives in host/; this is wiring only.
package main

import (
	"os"

	"github.com/hermes-agent/hermes/host/cli"
)

func main() {
	os.Exit(cli.Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
