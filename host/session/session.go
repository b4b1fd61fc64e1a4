// Package session owns the host's live MCP connection to one server: the
// transport plugin process, the sdk transport client across the process
// boundary, and mcp-go's client on top of it (capabilities, handlers). It
// negotiates the protocol revision (protocol.go) and remembers per server
// what was spoken (memory.go, $HERMES_HOME/mcp-protocols.json), keeps tool
// schemas as servers wrote them (schemas.go), and turns failures into
// one-line reasons a user can act on. It does not decide when to reconnect
// or which tools a model sees.
package session

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/screening"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/mcpgo/pluginconn"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/transport"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Version is the host's version, sent as clientInfo.
var Version = "0.1.0"

// Deps are what Connect needs from the host.
type Deps struct {
	Home       string
	Supervisor *supervisor.Supervisor
	Logger     hclog.Logger
	// OnNotification receives every server notification (list_changed,
	// logging, progress...). It runs on the transport's reader: return fast.
	OnNotification func(server string, n mcpvalue.Notification)
	// OnClosed is called once when the connection ends without Close (the
	// plugin died, the server exited), with why. err is nil when hermes
	// stopped the plugin on purpose (at the end of a one-shot command, say):
	// the connection was ended, not dropped.
	OnClosed func(server string, err error)
	// Sampling, Elicitation and Roots answer server requests; nil declines
	// to offer the capability.
	Sampling    client.SamplingHandler
	Elicitation client.ElicitationHandler
	Roots       client.RootsHandler
	// Headers supplies per-request headers; nil for none. It wins over
	// Auth.
	Headers func(ctx context.Context, req transport.HeadersRequest) (map[string]string, error)
	// Auth gives the credentials of servers with an auth: method (the
	// host's auth plugins); nil leaves such servers without (their 401
	// then says to log in).
	Auth Credentials
	// Environ is the host's environment ("KEY=value" lines) whose safe
	// part a stdio server inherits (config.ChildEnvFrom); nil is the
	// process's. The CLI passes its run's (cli.Options.Env).
	Environ []string
}

// Credentials gives a remote server's credentials: the host's manager of
// auth plugins.
type Credentials interface {
	For(ctx context.Context, srv *config.Server) (ServerCredentials, error)
}

// ServerCredentials answers the transport plugin's header and challenge
// callbacks for one server.
type ServerCredentials interface {
	Headers(ctx context.Context, req transport.HeadersRequest) (map[string]string, error)
	Challenge(ctx context.Context, c transport.ChallengeRequest) (transport.ChallengeAnswer, error)
}

// Session is one live connection.
type Session struct {
	Server *config.Server
	Client *client.Client
	Init   *mcp.InitializeResult
	// Protocol is the revision in use and why.
	Protocol Protocol
	// Plugin is the transport plugin process serving this session.
	Plugin *supervisor.Plugin
	// Latency is how long start and initialize took.
	Latency time.Duration

	conn  *pluginhost.TransportConn
	watch *watch

	listenOnce sync.Once
	stopListen context.CancelFunc
	// offersRoots: the session has a roots handler (NotifyRootsChanged).
	offersRoots bool
}

// PluginName returns the transport plugin a server uses (the entry's
// resolution, config.Server.Launch): stdio for stdio, http for http and
// sse, else the transport's own name.
func PluginName(srv *config.Server) string { return srv.Launch().Plugin }

// TransportConfig builds what the plugin learns about srv, from the
// entry's resolution (config.Server.Launch).
func TransportConfig(srv *config.Server, home string) transport.Config {
	return transportConfig(srv, home, nil)
}

// transportConfig is TransportConfig with the host's environment given
// (nil is the process's), see Deps.Environ.
func transportConfig(srv *config.Server, home string, environ []string) transport.Config {
	l := srv.Launch()
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
		cfg.StderrLog = filepath.Join(home, "logs", "mcp-stderr.log")
		cfg.LogLinesPerSecond, cfg.LogBurst = l.LogLinesPerSecond, l.LogBurst
		cfg.Sandbox = SandboxPolicy(home, srv)
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

// pluginExitWait bounds how long a broken message stream waits for its
// plugin process to be gone, to say how it ended.
const pluginExitWait = time.Second

// Connect starts the server's transport plugin and completes the MCP
// handshake, all within the server's connect_timeout (and ctx).
func Connect(ctx context.Context, srv *config.Server, d Deps) (*Session, error) {
	if srv.Err != nil {
		return nil, srv.Err
	}
	// A project file's entry runs only once the person approved it as it
	// is now (its digest).
	if err := srv.AdmitOrigin(); err != nil {
		return nil, connectErr(srv.Name, sdk.CodeConfig, "%s", err.Error())
	}
	// An entry the security screening rejects is never started, even when
	// it reached config.yaml some other way than hermes mcp add.
	if err := screening.Admit(srv); err != nil {
		return nil, connectErr(srv.Name, sdk.CodeConfig, "%s", err.Error())
	}
	// A project file never picks the transport plugin that runs: however
	// an entry got here, only hermes's built-in transports start for it.
	if l := srv.Launch(); srv.FromProject() && !config.ProjectTransport(l.Transport) {
		return nil, connectErr(srv.Name, sdk.CodeConfig, "%s", &config.ProjectTransportError{Server: srv.Name, File: srv.Origin.File, Transport: l.Transport})
	}
	if why := sandboxMisplaced(srv); why != "" {
		return nil, connectErr(srv.Name, sdk.CodeConfig, "%s", why)
	}
	if err := checkSandboxPaths(d.Home, srv); err != nil {
		return nil, err
	}
	if d.Logger == nil {
		d.Logger = hclog.NewNullLogger()
	}
	start := time.Now()
	timeout := srv.ConnectTimeout
	if timeout <= 0 {
		timeout = config.DefaultConnectTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	headers, challenge := d.Headers, (func(context.Context, transport.ChallengeRequest) (transport.ChallengeAnswer, error))(nil)
	if headers == nil && d.Auth != nil && srv.Auth != "" && PluginName(srv) != "stdio" {
		creds, err := d.Auth.For(ctx, srv)
		if err != nil {
			se := sdk.AsError(err)
			code := se.Code
			if code == sdk.CodeOther {
				code = sdk.CodeAuth
			}
			return nil, connectErr(srv.Name, code, "%s", flatten(err))
		}
		headers, challenge = creds.Headers, creds.Challenge
	}
	p, err := d.Supervisor.Launch(TransportSpec(srv))
	if err != nil {
		code := sdk.CodeOther
		if errors.Is(err, supervisor.ErrNotFound) {
			code = sdk.CodeNotFound
		}
		var ce *supervisor.ContractError
		if errors.As(err, &ce) {
			code = sdk.CodeContract
		}
		// A pinned plugin binary that changed since install stays refused
		// until the entry is installed again: retrying cannot help.
		var sum *supervisor.ChecksumError
		if errors.As(err, &sum) {
			code = sdk.CodeConfig
		}
		return nil, connectErr(srv.Name, code, "%s", flatten(err))
	}
	// fail stops the plugin and returns every failure as a *ConnectError.
	fail := func(err error) (*Session, error) {
		p.Kill()
		var ce *ConnectError
		if errors.As(err, &ce) {
			return nil, projectHeadersRefused(srv, ce, headers != nil)
		}
		var se *sdk.Error
		if errors.As(err, &se) {
			return nil, projectHeadersRefused(srv, &ConnectError{Server: srv.Name, Err: se}, headers != nil)
		}
		return nil, connectErr(srv.Name, sdk.CodeOther, "%s", flatten(err))
	}
	raw, err := p.Dispense()
	if err != nil {
		return fail(err)
	}
	h, ok := raw.(*pluginhost.Transport)
	if !ok {
		return fail(fmt.Errorf("plugin %s is not a transport plugin", p.Path))
	}
	// A stdio server that writes non-JSON to stdout before it has answered
	// initialize gets garbageGrace to answer all the same (a banner line);
	// past it the connect fails at once with what it wrote, instead of
	// waiting out connect_timeout.
	negotiateCtx, endNegotiate := context.WithCancel(ctx)
	defer endNegotiate()
	var garbage atomic.Pointer[sdk.Error]
	// Only a stdio server's stdout is the protocol stream itself; over
	// HTTP a stray message is one bad response among good ones.
	stdio := PluginName(srv) == "stdio"
	opts := pluginconn.DialOptions{TransportOptions: pluginhost.TransportOptions{
		OnWarning: func(w *sdk.Error) {
			d.Logger.Warn(w.Message, "server", srv.Name)
			if w.Code == sdk.CodeGarbage && stdio && garbage.CompareAndSwap(nil, w) {
				time.AfterFunc(garbageGrace, endNegotiate)
			}
		},
		Stream:          p.Stream(),
		MaxMessageBytes: p.Spec().MaxFrameBytes,
		LimitName:       "max_message_mb",
		Headers:         headers,
		Challenge:       challenge,
		PluginExit:      func() string { return p.ExitReason(pluginExitWait) },
	}, MaxServerRequests: srv.MaxServerRequests, RequestsLimitName: "max_server_requests"}
	opts.OnUndeliverable = func(e *sdk.Error) { d.Logger.Debug("message to server failed", "server", srv.Name, "error", e.Message) }
	if d.OnClosed != nil {
		opts.OnClosed = func(err *sdk.Error) {
			if p.Stopped() {
				d.OnClosed(srv.Name, nil)
				return
			}
			d.OnClosed(srv.Name, err)
		}
	}
	tcfg := transportConfig(srv, d.Home, d.Environ)
	tcfg.DynamicHeaders = headers != nil
	tr, conn, err := pluginconn.Dial(ctx, h, tcfg, opts)
	if err != nil {
		if ctx.Err() != nil {
			return fail(connectErr(srv.Name, sdk.CodeTimeout, "no answer to connect within %s (connect_timeout)", timeout))
		}
		return fail(err)
	}
	if err := checkSandboxed(srv, conn.Properties()); err != nil {
		return fail(err)
	}
	tr, probe := watchProbe(tr)
	var copts []client.ClientOption
	if probe.http {
		// Over HTTP every request has its own answer, and a server that
		// does not know server/discover refuses it at once (the plugin
		// hands the host the refusal): the probe needs no bound of its
		// own beyond connect_timeout. mcp-go's 5 s bound is for stdio
		// servers that never answer; on a loaded machine it cut slow
		// answers short and sent a modern server initialize instead.
		copts = append(copts, client.WithDiscoverTimeout(-1))
	}
	// The capabilities mcp-go would not declare by itself; it fills in the
	// others from the handlers set.
	var caps mcp.ClientCapabilities
	if d.Sampling != nil {
		copts = append(copts, client.WithSamplingHandler(d.Sampling))
		// The host's sampling converts tools and toolChoice both ways
		// (host/sampling); mcp-go declares sampling without them, and a
		// server must not send tools unless the client declares it.
		caps.Sampling = &mcp.SamplingCapability{Tools: &struct{}{}}
	}
	if d.Elicitation != nil {
		copts = append(copts, client.WithElicitationHandler(d.Elicitation))
		if c, ok := d.Elicitation.(interface {
			Capability() mcp.ElicitationCapability
		}); ok {
			// mcp-go offers form mode only; a handler may offer URL mode.
			ec := c.Capability()
			caps.Elicitation = &ec
		}
	}
	if caps.Sampling != nil || caps.Elicitation != nil {
		copts = append(copts, client.WithClientCapabilities(caps))
	}
	if d.Roots != nil {
		copts = append(copts, client.WithRootsHandler(d.Roots))
	}
	c := client.NewClient(tr, copts...)
	if d.OnNotification != nil {
		name := srv.Name
		c.OnNotification(func(n mcp.JSONRPCNotification) { d.OnNotification(name, NotificationValue(n)) })
	}
	s := &Session{Server: srv, Client: c, Plugin: p, conn: conn, watch: probe, offersRoots: d.Roots != nil}
	if err := c.Start(ctx); err != nil {
		return fail(s.explain(ctx, "start", err, timeout))
	}
	mem := remembered(d.Home, srv)
	init, proto, err := negotiate(negotiateCtx, c, probe, srv, mem)
	if err != nil {
		if g := garbage.Load(); g != nil && ctx.Err() == nil {
			return fail(connectErr(srv.Name, sdk.CodeGarbage, "%s (no answer to initialize followed within %s)", g.Message, garbageGrace))
		}
		return fail(s.explain(ctx, "initialize", err, timeout))
	}
	// Connected: later garbage is a warning only.
	garbage.CompareAndSwap(nil, &sdk.Error{})
	s.Init = init
	s.Protocol = proto
	if proto.Source != SourcePinned && proto.Revision != mem {
		if err := remember(d.Home, srv, proto.Revision); err != nil {
			d.Logger.Debug("cannot remember the protocol revision", "server", srv.Name, "error", err)
		}
	}
	s.Latency = time.Since(start)
	return s, nil
}

// projectHeadersRefused is ce, or, when the server of a project entry
// refused the headers its project file gives it (HTTP 401 or 403, no auth
// plugin's headers), the same failure with a hint of its own: the
// transport's hint names config.yaml and a .env variable, but these
// headers are written in the project file (a .mcp.json's literal included)
// and are fixed there.
func projectHeadersRefused(srv *config.Server, ce *ConnectError, dynamic bool) *ConnectError {
	se := ce.Err
	if !srv.FromProject() || dynamic || len(srv.Headers) == 0 || se.Code != sdk.CodeAuth ||
		se.Status != http.StatusUnauthorized && se.Status != http.StatusForbidden {
		return ce
	}
	names := slices.Sorted(maps.Keys(srv.Headers))
	var reads []string
	written, _ := srv.Written()["headers"].(map[string]any)
	for _, v := range srv.Origin.Reads {
		for _, h := range written {
			if hs, ok := h.(string); ok && strings.Contains(hs, "${"+v) && !slices.Contains(reads, "${"+v+"}") {
				reads = append(reads, "${"+v+"}")
			}
		}
	}
	fix := fmt.Sprintf("fix the header in %s (the project's file, not your .env or config.yaml)", srv.OriginText())
	if len(reads) > 0 {
		fix = fmt.Sprintf("check %s in your environment or .env, or fix the header in %s", strings.Join(reads, ", "), srv.OriginText())
	}
	msg := fmt.Sprintf("MCP server '%s' needs credentials (HTTP %d %s): it refused the %s header(s) the project file %s gives it; %s, then approve the changed entry with: hermes mcp approve %s",
		srv.Name, se.Status, http.StatusText(se.Status), strings.Join(names, ", "), srv.OriginText(), fix, srv.Name)
	e := sdk.NewError(se.Code, "%s", msg)
	e.Status, e.WWWAuthenticate = se.Status, se.WWWAuthenticate
	return &ConnectError{Server: ce.Server, Err: e}
}

// garbageGrace is how long a server that wrote non-JSON to stdout still
// has to answer initialize before the connect fails with what it wrote.
const garbageGrace = 5 * time.Second

// TransportSpec is the launch spec of srv's transport plugin,
// hermes-transport-<PluginName>: the binary srv's plugin: block pins when
// the pin is for that plugin (config.Launch.Pin; supervisor.PinnedSpec:
// that exact file only, its sha256 checked on the file executed at every
// start, a changed one refused naming the install to redo), else the one
// on the search path.
func TransportSpec(srv *config.Server) supervisor.Spec {
	l := srv.Launch()
	return supervisor.PinnedSpec(supervisor.Spec{
		Kind:          sdk.KindTransport,
		Name:          l.Plugin,
		Label:         srv.Name,
		Plugins:       map[string]plugin.Plugin{sdk.KindTransport: pluginhost.TransportPlugin{}},
		MaxFrameBytes: l.MaxMessageBytes,
	}, (*supervisor.Pin)(l.Pin), srv.Name)
}

// explain turns a failed start or initialize into one line naming the cause.
func (s *Session) explain(ctx context.Context, step string, err error, timeout time.Duration) error {
	// A connection that ended says why (server exited, plugin died...).
	if s.conn != nil {
		if cerr := s.conn.Err(); cerr != nil {
			err = cerr
		}
	}
	var ce *ConnectError
	if errors.As(err, &ce) {
		return ce
	}
	var se *sdk.Error
	if errors.As(err, &se) && se.Code != sdk.CodeCanceled {
		return &ConnectError{Server: s.Server.Name, Err: se}
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		msg := fmt.Sprintf("no answer to %s within %s (connect_timeout)", step, timeout)
		if s.conn != nil {
			if w := s.conn.LastWarning(); w != nil {
				msg += "; " + w.Message
			}
		}
		return connectErr(s.Server.Name, sdk.CodeTimeout, "%s", msg)
	}
	return connectErr(s.Server.Name, sdk.CodeOther, "%s", flatten(err))
}

// flatten makes an error one line.
func flatten(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// ConnectError is why a server could not be connected, in one line: the
// plugin's *sdk.Error as it arrived (code, message, HTTP status,
// challenge), or one the host made for a failure of its own (config,
// sandbox, timeout...), with the server it was for.
type ConnectError struct {
	Server string
	Err    *sdk.Error
}

// connectErr is a ConnectError of the host's own with code and a
// formatted message.
func connectErr(server, code, format string, args ...any) *ConnectError {
	return &ConnectError{Server: server, Err: sdk.NewError(code, format, args...)}
}

// Error returns the one-line reason.
func (e *ConnectError) Error() string { return e.Err.Message }

// Unwrap returns the sdk error.
func (e *ConnectError) Unwrap() error { return e.Err }

// Code is the sdk error code of the failure.
func (e *ConnectError) Code() string { return e.Err.Code }

// Challenge is the WWW-Authenticate of the server's 401/403 behind the
// failure, or "".
func (e *ConnectError) Challenge() string { return e.Err.WWWAuthenticate }

// FailureCode is the failure code (package failure) of the sdk code.
func (e *ConnectError) FailureCode() failure.Code { return failure.Of(e.Err) }

// Done is closed when the connection has ended on its own.
func (s *Session) Done() <-chan struct{} { return s.conn.Done() }

// CallTool calls a tool, as s.Client.CallTool does, but has the adapter
// decode the result once, straight from the message it arrived in, instead
// of mcp-go's several copies: a result near max_message_mb then costs the
// host about twice its size, not four times.
func (s *Session) CallTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var sink pluginconn.ResultSink
	res, err := s.Client.CallTool(pluginconn.WithResultSink(ctx, &sink), req)
	if err != nil {
		return nil, err
	}
	if r := sink.Take(); r != nil {
		return r, nil
	}
	return res, nil
}

// Err says why the connection ended, or nil.
func (s *Session) Err() error { return s.conn.Err() }

// Close ends the MCP session, waits for the server's graceful shutdown
// (bounded by the plugin's graces), and stops the plugin.
func (s *Session) Close() error {
	s.stopListening()
	done := make(chan struct{})
	go func() { _ = s.Client.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	s.Plugin.Kill()
	return nil
}

// Detach ends the session without waiting for the server's shutdown: the
// plugin closes the server gracefully on its own and exits, and nothing is
// left running after the graces. For one-shot commands, whose output is
// complete: the user's prompt returns at once. It falls back to Close's
// kill when the plugin does not take the request.
func (s *Session) Detach() {
	s.stopListening()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	// Marked first: the plugin may finish before its answer arrives.
	s.Plugin.Ending()
	if err := s.conn.Detach(ctx); err != nil {
		s.Plugin.Kill()
		return
	}
	s.Plugin.Detach()
}
