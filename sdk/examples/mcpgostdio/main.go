// Command hermes-transport-mcpgostdio is an example third-party transport
// plugin: the whole plugin is mcp-go's own stdio transport handed to
// sdk.ServeTransport. Build it as hermes-transport-mcpgostdio, put it on the
// plugin search path, and a server entry with `transport: mcpgostdio` uses it.
//
// It is deliberately minimal; the built-in hermes-transport-stdio adds what
// a production transport needs (stderr log, exit reasons, non-JSON
// detection, process-group handling).
package main

import (
	"github.com/hermes-agent/hermes/sdk"
	"github.com/mark3labs/mcp-go/client/transport"
)

func main() {
	sdk.ServeTransport(func(cfg sdk.TransportConfig, _ sdk.Host) (sdk.Transport, error) {
		if cfg.Command == "" {
			return nil, sdk.NewError(sdk.CodeConfig, "server %q: the mcpgostdio transport needs 'command'", cfg.Server)
		}
		return transport.NewStdioWithOptions(cfg.Command, cfg.Env, cfg.Args), nil
	})
}
