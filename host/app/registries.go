package app

import (
	"context"
	"github.com/hermes-agent/hermes/host/credentials"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/roots"
	"github.com/hermes-agent/hermes/host/session"
)

// Mode is how a registry runs, by what the command needs.
type Mode int

const (
	// Snapshot connects every enabled server for a command that lists or
	// calls once and exits ('hermes mcp call', 'hermes tools --live'): no
	// notification streams, no retry.
	Snapshot Mode = iota
	// Cached is Snapshot for a listing: a server with a fresh record of
	// what it offered registers its tools from it and is not started
	// ('hermes tools').
	Cached
	// Live is a long-lived process's ('hermes chat', 'hermes mcp serve'
	// with tools): notification streams open, lazy start from the records,
	// idle stop, reconnects.
	Live
)

// Toolset is one of the host's own toolsets: its name and its tools.
type Toolset struct {
	Name  string   `json:"name"`
	Tools []string `json:"tools"`
}

// BuiltinToolsets are the host's own toolsets, whose tool names an MCP
// tool never takes. This build has none yet; the registry still reserves
// their names when there are some.
func BuiltinToolsets() []Toolset { return []Toolset{} }

// builtinTools are the names of the tools of BuiltinToolsets.
func builtinTools() []string {
	var names []string
	for _, ts := range BuiltinToolsets() {
		names = append(names, ts.Tools...)
	}
	return names
}

// Registry builds a registry of servers in mode m with the host's session
// dependencies and the run's request handlers. The roots returned are the
// ones its servers were offered (see Requests.Bind).
func (f *Factory) Registry(m Mode, servers []*config.Server) (*registry.Manager, *roots.Set) {
	return f.RegistryWithAuth(m, servers, f.Credentials())
}

// RegistryWithAuth is Registry with the auth plugins of creds instead of
// the run's background ones (a gateway's person's, in their own sealed
// token folder).
func (f *Factory) RegistryWithAuth(m Mode, servers []*config.Server, creds *credentials.Manager) (*registry.Manager, *roots.Set) {
	opts := registry.Options{
		Servers:  servers,
		Builtins: builtinTools(),
		Deps:     f.sessionDeps(creds),
		Snapshot: m != Live,
	}
	set := f.Requests().Bind(&opts)
	if m != Snapshot {
		opts.Lazy = true
		opts.Records = registry.RecordsFrom(f.Offered())
	}
	return registry.New(opts), set
}

// SessionDeps are the session dependencies of the run: its home,
// supervisor, log, environment and background credentials (a server that
// needs a login fails with the plugin's message naming 'hermes mcp
// login'; nothing opens a browser).
func (f *Factory) SessionDeps() session.Deps { return f.sessionDeps(f.Credentials()) }

// LoginSessionDeps are SessionDeps with the login manager's credentials: a
// challenge may open a browser and step up ('hermes mcp login').
func (f *Factory) LoginSessionDeps() session.Deps { return f.sessionDeps(f.LoginCredentials()) }

func (f *Factory) sessionDeps(m *credentials.Manager) session.Deps {
	return session.Deps{
		Home:       f.HomePath(),
		Supervisor: f.sup,
		Logger:     f.Log,
		Auth:       m.Sessions(),
		Environ:    f.opts.Env,
	}
}

// Connect opens one session to srv with the run's handlers, without a
// registry ('hermes mcp test').
func (f *Factory) Connect(ctx context.Context, srv *config.Server) (*session.Session, error) {
	d := f.SessionDeps()
	f.Requests().BindSession(&d, srv)
	return session.Connect(ctx, session.PlanFor(srv, d.Home, d.Environ), d)
}
