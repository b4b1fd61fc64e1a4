// Command hermes-transport-http is the Hermes transport plugin for remote MCP
// servers. It speaks Streamable HTTP (transport "http", the default for a
// server with a url) and the legacy HTTP+SSE transport (transport "sse")
// with mcp-go's client transports, and adds what the host needs around
// them: TLS settings and client certificates, headers from the config and,
// per request, from the host (auth plugins), credentials that never follow
// a redirect to another origin, a content-type preflight that recognises a
// web page, and errors classified into the sdk's codes (auth, not MCP, HTTP
// status, connection lost, session expired, timeout, config). It moves
// messages only: the handshake, and what to do when the server forgets the
// session, are the host's.
package main

import (
	"context"
	"errors"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/mcpgo"
	"github.com/hermes-agent/hermes/sdk/transport"
)

func main() {
	log := sdk.NewPluginLogger("http")
	transport.Serve(opener(log), sdk.WithLogger(log))
}

// opener connects one server: it checks the entry, runs the content-type
// preflight and starts the mcp-go transport, all within ctx (the host's
// connect_timeout).
func opener(log hclog.Logger) transport.Opener {
	return func(ctx context.Context, cfg transport.Config, host transport.Host) (transport.Conn, error) {
		t, err := newTransport(cfg, host, log.Named(cfg.Server))
		if err != nil {
			return nil, err
		}
		if t.preflightWanted() {
			if err := t.preflight(ctx); err != nil {
				return nil, err
			}
		}
		c, err := mcpgo.Adapt(ctx, t)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
				return nil, sdk.NewError(sdk.CodeTimeout, "MCP server '%s' at %s did not accept a connection in time (connect_timeout)", cfg.Server, t.shownURL)
			}
			return nil, err
		}
		return c, nil
	}
}
