// Command hermes-transport-stdio is the Hermes transport plugin for local MCP
// servers: it starts the server program with exactly the environment the
// host computed, moves newline-delimited JSON-RPC messages between the host
// and the server's stdin/stdout as bytes (it never decodes them), appends the
// server's stderr to the shared server log, explains an exit with its status
// and last stderr line (which process died, of what status or signal), and
// stops the server gracefully (stdin closed, then SIGTERM, then SIGKILL).
// The server lives in the plugin's process group and is killed by the kernel
// if the plugin dies. On Linux, where the kernel allows it, each server runs
// in a pid namespace of its own whose init is the plugin's launcher mode
// (internal/sandbox/launcher): when the server ends, or the plugin dies in
// any way, the kernel kills everything in it, even a daemon in a session of
// its own. Elsewhere, and as a fallback, the plugin is a child subreaper:
// whatever a server leaves running is handed to the plugin and killed when
// the server stops. No server gets a descriptor the plugin inherited. A server whose entry has a
// sandbox: block is started through the plugin's own binary in a hidden
// launcher mode that puts it under that sandbox first (internal/sandbox;
// docs/SANDBOX.md). The launcher runs from the init of
// internal/sandbox/launcher, before the gRPC, protobuf and go-plugin
// packages are initialized, so it never reaches main.
//
// It imports the sdk's kind-neutral root and transport packages only, so the
// process stays as lean as a bare go-plugin plugin.
package main

import (
	"context"

	// Started as the sandbox launcher of a server, the process becomes
	// that server in this package's init and never gets to main.
	_ "github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

func main() {
	closeInherited()
	sandbox.Prewarm()
	log := sdk.NewPluginLogger("stdio")
	if err := becomeSubreaper(); err != nil {
		log.Warn("cannot become the subreaper of the servers' processes; a daemon a server leaves behind may outlive it", "error", err)
	}
	transport.Serve(func(ctx context.Context, cfg transport.Config, host transport.Host) (transport.Conn, error) {
		return start(ctx, cfg, host, log.Named(cfg.Server))
	}, sdk.WithLogger(log))
}
