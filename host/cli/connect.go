package cli

import (
	"context"
	"fmt"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
)

// loadServer loads config.yaml (with the project's servers merged over it)
// and returns the named server; a project server waiting for a decision is
// asked about on a terminal first (admitProject).
func loadServer(e *cmdkit.Env, name string) (*config.Config, *config.Server, error) {
	cfg, err := e.F.Config()
	if err != nil {
		return nil, nil, cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	if cfg.SafeMode {
		return nil, nil, cmdkit.WithCode(cmdkit.CodeSafeMode, cmdkit.Failf("HERMES_SAFE_MODE is set, so no MCP servers are loaded; unset it to use '%s'", name))
	}
	srv := cfg.Server(name)
	if srv == nil {
		return nil, nil, notFound(name, cfg.Names())
	}
	admitProject(e, srv)
	return cfg, srv, nil
}

// connect opens a session to srv with the host's handlers. A server with
// an auth: method gets its credentials from the background manager: it
// never opens a browser or asks anything, and a server that needs a login
// fails with the plugin's message naming 'hermes mcp login'.
func connect(e *cmdkit.Env, ctx context.Context, srv *config.Server) (*session.Session, error) {
	return e.F.Connect(ctx, srv)
}

// transportLine describes how a server is reached, for people, as it is
// configured: a ${VAR} in the command line or url is shown unresolved.
func transportLine(srv *config.Server) string {
	l := srv.Launch()
	if l.Plugin == config.TransportStdio {
		return fmt.Sprintf("stdio → %s", cmdkit.ShownCommandLine(srv))
	}
	kind := "HTTP"
	if l.Transport == config.TransportSSE {
		kind = "SSE"
	} else if l.Transport != config.TransportHTTP {
		kind = l.Transport
	}
	return fmt.Sprintf("%s → %s", kind, cmdkit.ShownURL(srv))
}
