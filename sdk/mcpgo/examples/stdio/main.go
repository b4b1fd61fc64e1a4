// Command hermes-transport-mcpgostdio is an example third-party transport
// plugin: the whole plugin is mcp-go's own stdio transport handed to the
// sdk's mcp-go adapter. Build it as hermes-transport-mcpgostdio, put it on
// the plugin search path, and a server entry with `transport: mcpgostdio`
// uses it.
//
// It is deliberately minimal; the built-in hermes-transport-stdio adds what
// a production transport needs (stderr log, exit reasons, non-JSON
// detection, a graceful stop) and moves bytes without decoding them.
package main

import (
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/mcpgo"
	"github.com/hermes-agent/hermes/sdk/transport"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
)

func main() {
	transport.Serve(mcpgo.Opener(func(cfg transport.Config, _ transport.Host) (mcptransport.Interface, error) {
		if cfg.Command == "" {
			return nil, sdk.NewError(sdk.CodeConfig, "server %q: the mcpgostdio transport needs 'command'", cfg.Server)
		}
		return mcptransport.NewStdioWithOptions(cfg.Command, cfg.Env, cfg.Args), nil
	}))
}
