package cli

import (
	"context"
	"fmt"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/credentials"
	"github.com/hermes-agent/hermes/host/session"
)

// loadServer loads config.yaml (with the project's servers merged over it)
// and returns the named server; a project server waiting for a decision is
// asked about on a terminal first (admitProject).
func (e *env) loadServer(name string) (*config.Config, *config.Server, error) {
	cfg, err := e.loadConfig(e.home)
	if err != nil {
		return nil, nil, withCode(codeConfig, failf("%s", oneLine(err.Error())))
	}
	if cfg.SafeMode {
		return nil, nil, withCode(codeSafeMode, failf("HERMES_SAFE_MODE is set, so no MCP servers are loaded; unset it to use '%s'", name))
	}
	srv := cfg.Server(name)
	if srv == nil {
		return nil, nil, notFound(name, cfg.Names())
	}
	e.admitProject(srv)
	return cfg, srv, nil
}

// connect opens a session to srv with the host's handlers. A server with
// an auth: method gets its credentials from the background manager: it
// never opens a browser or asks anything, and a server that needs a login
// fails with the plugin's message naming 'hermes mcp login'.
func (e *env) connect(ctx context.Context, srv *config.Server) (*session.Session, error) {
	d := e.withSamplingDeps(srv, e.sessionDeps(e.creds()))
	e.bindElicitRootsDeps(&d, srv)
	return session.Connect(ctx, session.PlanFor(srv, d.Home, d.Environ), d)
}

// sessionDeps are the session dependencies of a command, with credentials
// from m.
func (e *env) sessionDeps(m *credentials.Manager) session.Deps {
	return session.Deps{
		Home:       e.home,
		Supervisor: e.sup,
		Logger:     e.log,
		Auth:       m.Sessions(),
		Environ:    e.environ,
	}
}

// creds returns the background manager of auth plugins: no UI, so a
// server that needs a login is reported, never prompted for.
func (e *env) creds() *credentials.Manager {
	e.credsMu.Lock()
	defer e.credsMu.Unlock()
	if e.bgCreds == nil {
		e.bgCreds = credentials.New(credentials.Options{Home: e.home, Supervisor: e.sup, Logger: e.log})
	}
	return e.bgCreds
}

// loginManager returns the manager of auth plugins for login flows: the
// terminal UI relays the plugins' steps (a browser to open, a URL and code
// to show, a redirect URL to paste), and a challenge may step up.
func (e *env) loginManager() *credentials.Manager {
	e.credsMu.Lock()
	defer e.credsMu.Unlock()
	if e.loginCreds == nil {
		u := &termUI{p: e.p, out: e.out, in: e.input, getenv: e.getenv}
		e.loginCreds = credentials.New(credentials.Options{Home: e.home, Supervisor: e.sup, Logger: e.log, UI: u, StepUp: true})
	}
	return e.loginCreds
}

// closeCredentials stops the auth plugins of both managers.
func (e *env) closeCredentials() {
	e.credsMu.Lock()
	bg, lg := e.bgCreds, e.loginCreds
	e.credsMu.Unlock()
	for _, m := range []*credentials.Manager{lg, bg} {
		if m != nil {
			m.Close()
		}
	}
}

// transportLine describes how a server is reached, for people, as it is
// configured: a ${VAR} in the command line or url is shown unresolved.
func transportLine(srv *config.Server) string {
	l := srv.Launch()
	if l.Plugin == config.TransportStdio {
		return fmt.Sprintf("stdio → %s", shownCommandLine(srv))
	}
	kind := "HTTP"
	if l.Transport == config.TransportSSE {
		kind = "SSE"
	} else if l.Transport != config.TransportHTTP {
		kind = l.Transport
	}
	return fmt.Sprintf("%s → %s", kind, shownURL(srv))
}
