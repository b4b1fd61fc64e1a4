// Command hermes-transport-stdio is the Hermes transport plugin for local MCP
// servers: it starts the server program with exactly the environment the
// host computed, speaks newline-delimited JSON-RPC on its stdin/stdout,
// appends its stderr to the shared server log, and keeps the server in the
// plugin's process group so the server dies with the plugin.
package main

import (
	"github.com/hermes-agent/hermes/sdk"
)

func main() {
	log := sdk.NewPluginLogger("stdio")
	sdk.ServeTransport(func(cfg sdk.TransportConfig, _ sdk.Host) (sdk.Transport, error) {
		return newStdio(cfg, log.Named(cfg.Server)), nil
	}, sdk.ServeOptions{Logger: log})
}
