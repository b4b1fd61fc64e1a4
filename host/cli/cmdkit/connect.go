package cmdkit

import (
	"context"
	"fmt"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
)

// LoadServer loads config.yaml (with the project's servers merged over it)
// and returns the named server; a project server waiting for a decision is
// asked about on a terminal first (admitProject).
func LoadServer(e *Env, name string) (*config.Config, *config.Server, error) {
	cfg, err := e.F.Config()
	if err != nil {
		return nil, nil, WithCode(CodeConfig, Failf("%s", OneLine(err.Error())))
	}
	if cfg.SafeMode {
		return nil, nil, WithCode(CodeSafeMode, Failf("HERMES_SAFE_MODE is set, so no MCP servers are loaded; unset it to use '%s'", name))
	}
	srv := cfg.Server(name)
	if srv == nil {
		return nil, nil, NotFound(name, cfg.Names())
	}
	AdmitProject(e, srv)
	return cfg, srv, nil
}

// Connect opens a session to srv with the host's handlers. A server with
// an auth: method gets its credentials from the background manager: it
// never opens a browser or asks anything, and a server that needs a login
// fails with the plugin's message naming 'hermes mcp login'.
func Connect(e *Env, ctx context.Context, srv *config.Server) (*session.Session, error) {
	return e.F.Connect(ctx, srv)
}

// TransportLine describes how a server is reached, for people, as it is
// configured: a ${VAR} in the command line or url is shown unresolved.
func TransportLine(srv *config.Server) string {
	l := srv.Launch()
	if l.Plugin == config.TransportStdio {
		return fmt.Sprintf("stdio → %s", ShownCommandLine(srv))
	}
	kind := "HTTP"
	if l.Transport == config.TransportSSE {
		kind = "SSE"
	} else if l.Transport != config.TransportHTTP {
		kind = l.Transport
	}
	return fmt.Sprintf("%s → %s", kind, ShownURL(srv))
}
