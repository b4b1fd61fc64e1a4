package session

import (
	"time"

	"github.com/hermes-agent/hermes/host/homedir"

	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/screening"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/mcpgo/pluginconn"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// Plan is how one server entry starts, resolved once from the entry by
// PlanFor: whether it may start at all, and if so the transport plugin to
// launch, what that plugin learns, the credentials it needs, how long the
// connect may take and the protocol revision to ask for first. Connect
// carries a plan out and decides nothing of it again.
//
// The plan lives in package session, not in a package of its own, because
// two of its parts are the session's: the remembered revision is read from
// the session's memory of what servers spoke (memory.go), which Connect
// writes back after the handshake, and a refusal is the *ConnectError
// every caller of Connect already tells apart by its code. A package of its
// own would have to take both along or import session back.
//
// A Plan is a plain value: nothing in it is started or open, and building
// one runs no process. Its Transport holds the entry's settings as the
// plugin receives them (env values, headers): never print a plan.
type Plan struct {
	// Server is the entry the plan was made from; Connect hands it on to
	// the Session (Session.Server) and names it in its messages.
	Server *config.Server
	// Launch is the entry's resolution (config.Server.Launch): transport,
	// plugin, pin, local or remote, sandbox block, message bounds. It is
	// set also on a refused plan, for a caller that describes the entry.
	Launch config.Launch
	// Refused is why the entry may not start: the entry's own decoding
	// error (config.Server.Err) as it is, else a *RefusedError. nil when
	// it may start; the fields below are set only then.
	Refused error
	// Spec is the launch spec of the transport plugin,
	// hermes-transport-<Launch.Plugin>: the binary the entry's plugin:
	// block pins when the pin is for that plugin (supervisor.PinnedSpec:
	// that exact file only, its sha256 checked on the file executed at
	// every start, a changed one refused naming the install to redo), else
	// the one on the search path.
	Spec supervisor.Spec
	// Transport is what the plugin learns about the server. Its Sandbox
	// is the resolved sandbox policy (nil without a sandbox: block); its
	// DynamicHeaders is set by Connect, which alone knows whether headers
	// come from the host.
	Transport transport.Config
	// Auth is set when the server's credentials come from the host's auth
	// plugins (Deps.Auth): an auth: method on a remote server.
	Auth bool
	// ConnectTimeout bounds starting the plugin and the whole handshake:
	// the entry's connect_timeout, else config.DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Remembered is the revision the server spoke last time (MemoryFile
	// in Home), "" when there is none or it no longer applies.
	Remembered string
	// Home is the $HERMES_HOME the plan was made for: its sandbox policy
	// keeps it unreadable, Remembered was read there, and Connect writes
	// the revision spoken back there.
	Home string
}

// PlanFor resolves srv, a server entry of config.yaml or of a project
// file, into its launch plan for the host whose $HERMES_HOME is home and
// whose environment is environ ("KEY=value" lines, of which a stdio
// server inherits the safe part, config.ChildEnvFrom; nil is the
// process's). It reads the files the plan depends on (the sandbox's paths,
// the server's install folder, the protocol memory) and starts nothing.
//
// Admission comes first, in this order: a project file's entry runs only
// once the person approved it as it is now; an entry the security
// screening rejects never starts, however it reached the config; a
// project file never picks the transport plugin that runs; a sandbox:
// block must be able to apply, and its paths must resolve where the
// server may write. The first that fails is Plan.Refused.
func PlanFor(srv *config.Server, home string, environ []string) Plan {
	l := srv.Launch()
	p := Plan{Server: srv, Launch: l, Home: home, ConnectTimeout: srv.ConnectTimeout}
	if p.ConnectTimeout <= 0 {
		p.ConnectTimeout = config.DefaultConnectTimeout
	}
	if p.Refused = admit(srv, l, home); p.Refused != nil {
		return p
	}
	p.Spec = transportSpec(srv, l)
	p.Transport = transportConfig(srv, l, home, environ)
	p.Auth = srv.Auth != "" && l.Plugin != config.TransportStdio
	p.Remembered = remembered(home, srv)
	return p
}

// admit is the plan's verdict on srv: nil, srv.Err, or a *RefusedError.
func admit(srv *config.Server, l config.Launch, home string) error {
	if srv.Err != nil {
		return srv.Err
	}
	refused := func(code string, err error) error {
		return &RefusedError{connectErr(srv.Name, code, "%s", err.Error())}
	}
	if err := srv.AdmitOrigin(); err != nil {
		return refused(sdk.CodeConfig, err)
	}
	if err := screening.Admit(srv); err != nil {
		return refused(sdk.CodeConfig, err)
	}
	if srv.FromProject() && !config.ProjectTransport(l.Transport) {
		return refused(sdk.CodeConfig, &config.ProjectTransportError{Server: srv.Name, File: srv.Origin.File, Transport: l.Transport})
	}
	if srv.Sandbox == nil {
		return nil
	}
	if l.Sandbox == nil {
		return &RefusedError{connectErr(srv.Name, sdk.CodeConfig, "%s", srv.SandboxMisplaced())}
	}
	if err := l.Sandbox.CheckPaths(absHome(home), installDir(home, srv, l)); err != nil {
		return &RefusedError{connectErr(srv.Name, sdk.CodeSandbox, "sandbox of server %q refused: %v", srv.Name, err)}
	}
	return nil
}

// RefusedError is a plan's verdict that its entry may not start, decided
// from the entry (and the paths its sandbox names) before any process
// starts: not approved from a project file, rejected by the screening, a
// transport a project file may not pick, a sandbox that cannot apply or
// whose paths are refused. It unwraps to the *ConnectError Connect returns
// for it, with its code and one-line message.
type RefusedError struct{ *ConnectError }

// Unwrap returns the connect error.
func (e *RefusedError) Unwrap() error { return e.ConnectError }

// transportSpec is the plan's Spec (see Plan.Spec).
func transportSpec(srv *config.Server, l config.Launch) supervisor.Spec {
	return supervisor.PinnedSpec(supervisor.Spec{
		Kind:          sdk.KindTransport,
		Name:          l.Plugin,
		Label:         srv.Name,
		Plugins:       map[string]plugin.Plugin{sdk.KindTransport: pluginhost.TransportPlugin{}},
		MaxFrameBytes: l.MaxMessageBytes,
	}, (*supervisor.Pin)(l.Pin), srv.Name)
}

// transportConfig is the plan's Transport (see Plan.Transport).
func transportConfig(srv *config.Server, l config.Launch, home string, environ []string) transport.Config {
	cfg := transport.Config{
		Server:         srv.Name,
		Transport:      l.Transport,
		ConnectTimeout: srv.ConnectTimeout,
		Timeout:        srv.Timeout,
	}
	// Keys the host does not know (e.g. skip_preflight, or a third-party
	// transport's own settings) are for the plugin, ${VAR}s resolved.
	cfg.Extra = srv.Extra
	if l.Local {
		cfg.Command = srv.Command
		cfg.Args = srv.Args
		cfg.Env = config.ChildEnvFrom(environ, srv.Env)
		cfg.Cwd = srv.Cwd
		cfg.StderrLog = homedir.Dir(home).ServerStderrLog()
		cfg.LogLinesPerSecond, cfg.LogBurst = l.LogLinesPerSecond, l.LogBurst
		cfg.Sandbox = sandboxPolicy(home, srv, l)
	}
	if !l.Remote {
		return cfg
	}
	cfg.URL = srv.URL
	cfg.Headers = srv.Headers
	cfg.InsecureSkipVerify = !srv.SSLVerify
	cfg.CABundle = srv.CABundle
	cfg.ClientCert = srv.ClientCert
	cfg.ClientKey = srv.ClientKey
	return cfg
}

// EarlyOpenConfig is the config Connect will send when it opens plan's
// connection, for the transport plugin to open ahead of that Open
// (supervisor.Prelaunch): the bytes pluginconn.OpenConfig makes of the
// plan's transport config with Connect's options (no dynamic headers, the
// plugin's frame bound, the bound of the server's own requests). Nil for a plan whose connection
// needs the host while it opens (credentials from the auth plugins) or is
// not a local server's: those are never opened ahead. A plugin given other
// bytes than Connect sends opens twice, which a test of the one-shot call
// would show.
func (p Plan) EarlyOpenConfig() []byte {
	if p.Refused != nil || p.Server == nil || p.Auth || !p.Launch.Local {
		return nil
	}
	cfg := p.Transport
	cfg.DynamicHeaders = false
	raw, err := pluginconn.OpenConfig(cfg, pluginconn.DialOptions{
		TransportOptions:  pluginhost.TransportOptions{MaxMessageBytes: p.Spec.MaxFrameBytes},
		MaxServerRequests: p.Server.MaxServerRequests,
	})
	if err != nil {
		return nil
	}
	return raw
}
