package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
)

// loadServer loads config.yaml and returns the named server.
func (e *env) loadServer(name string) (*config.Config, *config.Server, error) {
	cfg, err := config.Load(e.home)
	if err != nil {
		return nil, nil, failf("%s", oneLine(err.Error()))
	}
	if cfg.SafeMode {
		return nil, nil, failf("HERMES_SAFE_MODE is set, so no MCP servers are loaded; unset it to use '%s'", name)
	}
	srv := cfg.Server(name)
	if srv == nil {
		names := cfg.Names()
		if len(names) == 0 {
			return nil, nil, failf("no server named '%s': no MCP servers are configured in %s; add one with 'hermes mcp add'", name, cfg.Path)
		}
		return nil, nil, failf("no server named '%s' in %s; configured: %s", name, cfg.Path, strings.Join(names, ", "))
	}
	return cfg, srv, nil
}

// connect opens a session to srv with the host's handlers.
func (e *env) connect(ctx context.Context, srv *config.Server) (*session.Session, error) {
	return session.Connect(ctx, srv, session.Deps{
		Home:       e.home,
		Supervisor: e.sup,
		Logger:     e.log,
	})
}

// transportLine describes how a server is reached, for people, as it is
// configured: a ${VAR} in the command line or url is shown unresolved.
func transportLine(srv *config.Server) string {
	if session.PluginName(srv) == "stdio" {
		return fmt.Sprintf("stdio → %s", shownCommandLine(srv))
	}
	kind := "HTTP"
	if srv.Transport == "sse" {
		kind = "SSE"
	} else if srv.Transport != "http" {
		kind = srv.Transport
	}
	return fmt.Sprintf("%s → %s", kind, shownURL(srv))
}
