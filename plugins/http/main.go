// Command hermes-transport-http is the Hermes transport plugin for remote MCP
// servers. It speaks Streamable HTTP (transport "http", the default for a
// server with a url) and the legacy HTTP+SSE transport (transport "sse")
// with mcp-go's client transports, and adds what the host needs around
// them: TLS settings and client certificates, headers from the config and,
// per request, from the host (auth plugins), an Authorization header that
// never follows a redirect to another origin, a content-type preflight that
// recognises a web page, errors the host can act on (auth, not MCP, HTTP
// status, connection lost, session expired), and a transparent
// re-initialisation when the server forgets the session.
package main

import (
	"github.com/hermes-agent/hermes/sdk"
)

func main() {
	log := sdk.NewPluginLogger("http")
	sdk.ServeTransport(func(cfg sdk.TransportConfig, host sdk.Host) (sdk.Transport, error) {
		return newTransport(cfg, host, log.Named(cfg.Server))
	}, sdk.ServeOptions{Logger: log})
}
