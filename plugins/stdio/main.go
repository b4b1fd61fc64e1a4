// Command hermes-transport-stdio is the Hermes transport plugin for local MCP
// servers: it starts the server program with exactly the environment the
// host computed, moves newline-delimited JSON-RPC messages between the host
// and the server's stdin/stdout as bytes (it never decodes them), appends the
// server's stderr to the shared server log, explains an exit with its status
// and last stderr line (which process died, of what status or signal), and
// stops the server gracefully (stdin closed, then SIGTERM, then SIGKILL).
// The server lives in the plugin's process group and is killed by the kernel
// if the plugin dies. On Linux, where the kernel allows it, each server runs
// in a pid namespace of its own whose init is the plugin's launcher,
// hermes-stdio-launcher (cmd/hermes-stdio-launcher, installed beside the
// plugin): when the server ends, or the plugin dies in any way, the kernel
// kills everything in it, even a daemon in a session of its own. Elsewhere,
// and as a fallback, the plugin is a child subreaper: whatever a server
// leaves running is handed to the plugin and killed when the server stops.
// No server gets a descriptor the plugin inherited. A server whose entry has
// a sandbox: block is started through the same launcher, which puts it under
// that sandbox first (internal/sandbox; docs/SANDBOX.md); one whose network
// is a list of hosts gets its filtering proxy, hermes-stdio-proxy
// (cmd/hermes-stdio-proxy, installed beside the plugin too), a process of
// its own that lives as long as the server. On Linux a plugin without its
// launcher beside it starts no server, and says so.
//
// It imports the sdk's kind-neutral root and transport packages only, so the
// process stays as lean as a bare go-plugin plugin.
package main

import (
	"context"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

func main() {
	closeInherited()
	log := sdk.NewPluginLogger("stdio")
	if err := becomeSubreaper(); err != nil {
		log.Warn("cannot become the subreaper of the servers' processes; a daemon a server leaves behind may outlive it", "error", err)
	}
	transport.Serve(func(ctx context.Context, cfg transport.Config, host transport.Host) (transport.Conn, error) {
		return start(ctx, cfg, host, log.Named(cfg.Server))
	}, sdk.WithLogger(log))
}
