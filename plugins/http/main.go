// Command hermes-transport-http is the Hermes transport plugin for remote MCP
// servers. It speaks Streamable HTTP (transport "http", the default for a
// server with a url) and the legacy HTTP+SSE transport of 2024-11-05
// (transport "sse") as a byte mover: each message the host writes is
// POSTed as it came, and each message the server sends (a JSON answer, the
// events of an answer's stream, the GET stream, the legacy event stream)
// reaches the host as it came, bounded by the message limit where the
// bytes arrive. Around that it adds what the host needs: TLS settings and
// client certificates, proxies from the environment, headers from the
// config and, per request, from the host (auth plugins, with 401 and 403
// challenges handed to the host), credentials that never follow a redirect
// to another origin, a content-type preflight that recognises a web page,
// session ids, Last-Event-ID resumption, and errors classified into the
// sdk's codes (auth, not MCP, HTTP status, connection lost, session
// expired, timeout, too large, config). The handshake, the headers of the
// protocol revision, and what to do when the server forgets the session,
// are the host's.
package main

import (
	"context"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

func main() {
	log := sdk.NewPluginLogger("http")
	transport.Serve(opener(log), sdk.WithLogger(log))
}

// opener connects one server: it checks the entry, runs the content-type
// preflight and, for legacy SSE, opens the event stream, all within ctx
// (the host's connect_timeout).
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
		if err := t.open(ctx); err != nil {
			t.finish(sdk.AsError(err))
			return nil, err
		}
		return t, nil
	}
}
