// Package session owns the host's live MCP connection to one server: the
// transport plugin process, the sdk transport client across the process
// boundary, and mcp-go's client on top of it (capabilities, handlers). It
// resolves a server entry once into a launch plan (plan.go) that Connect
// carries out, negotiates the protocol revision (protocol.go) and
// remembers per server what was spoken (memory.go,
// $HERMES_HOME/mcp-protocols.json), keeps tool schemas as servers wrote
// them (schemas.go), and turns failures into one-line reasons a user can
// act on. It does not decide when to reconnect or which tools a model
// sees.
package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/mcpvalue"
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

// Deps are what Connect needs from the host to carry out a plan, and
// (Home, Environ) the host's place that its callers make plans for.
type Deps struct {
	// Home is the host's $HERMES_HOME, for PlanFor; Connect itself reads
	// the plan's.
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
	// Sampling, Elicitation and Roots answer server requests
	// (requests.go); nil declines to offer the capability.
	Sampling    Sampler
	Elicitation Elicitor
	Roots       RootsLister
	// Headers supplies per-request headers; nil for none. It wins over
	// Auth.
	Headers func(ctx context.Context, req transport.HeadersRequest) (map[string]string, error)
	// Auth gives the credentials of servers with an auth: method (the
	// host's auth plugins); nil leaves such servers without (their 401
	// then says to log in).
	Auth Credentials
	// Environ is the host's environment ("KEY=value" lines) whose safe
	// part a stdio server inherits (config.ChildEnvFrom), for PlanFor;
	// nil is the process's. The CLI passes its run's (cli.Options.Env).
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
	// calls are the calls in flight, which a server's request is tied to
	// (relay.go).
	calls *inflight
}

// PluginName returns the transport plugin a server uses (the entry's
// resolution, config.Server.Launch): stdio for stdio, http for http and
// sse, else the transport's own name.
func PluginName(srv *config.Server) string { return srv.Launch().Plugin }

// pluginExitWait bounds how long a broken message stream waits for its
// plugin process to be gone, to say how it ended.
const pluginExitWait = time.Second

// Connect carries out plan: it starts the server's transport plugin, dials
// the server through it and negotiates the MCP handshake, all within the
// plan's connect timeout (and ctx). A refused plan starts nothing and
// returns its Refused.
func Connect(ctx context.Context, plan Plan, d Deps) (*Session, error) {
	if plan.Refused != nil || plan.Server == nil {
		return nil, cmp.Or(plan.Refused, errNoPlan)
	}
	srv := plan.Server
	if d.Logger == nil {
		d.Logger = hclog.NewNullLogger()
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, plan.ConnectTimeout)
	defer cancel()
	headers, challenge, err := d.credentials(ctx, plan)
	if err != nil {
		return nil, err
	}
	p, err := d.Supervisor.Launch(plan.Spec)
	if err != nil {
		return nil, launchErr(srv.Name, err)
	}
	// fail stops the plugin and returns every failure as a *ConnectError.
	fail := func(err error) (*Session, error) {
		p.Kill()
		return nil, connectFailure(srv, err, headers != nil)
	}
	h, err := dispense(p)
	if err != nil {
		return fail(err)
	}
	// A stdio server that writes non-JSON to stdout before it has answered
	// initialize gets garbageGrace to answer all the same (a banner line);
	// past it the connect fails at once with what it wrote, instead of
	// waiting out connect_timeout.
	negotiateCtx, endNegotiate := context.WithCancel(ctx)
	defer endNegotiate()
	var garbage atomic.Pointer[sdk.Error]
	calls := &inflight{}
	opts := dialOptions(plan, d, p, headers, challenge, func(w *sdk.Error) {
		// Only a stdio server's stdout is the protocol stream itself; over
		// HTTP a stray message is one bad response among good ones.
		if w.Code == sdk.CodeGarbage && plan.Launch.Plugin == config.TransportStdio && garbage.CompareAndSwap(nil, w) {
			time.AfterFunc(garbageGrace, endNegotiate)
		}
	})
	opts.RequestContext = calls.requestContext
	tcfg := plan.Transport
	tcfg.DynamicHeaders = headers != nil
	tr, conn, err := pluginconn.Dial(ctx, h, tcfg, opts)
	if err != nil {
		if ctx.Err() != nil {
			return fail(connectErr(srv.Name, sdk.CodeTimeout, "no answer to connect within %s (connect_timeout)", plan.ConnectTimeout))
		}
		return fail(err)
	}
	if err := checkSandboxed(plan, conn.Properties()); err != nil {
		return fail(err)
	}
	tr, probe := watchProbe(tr)
	c := client.NewClient(tr, clientOptions(d, probe.http)...)
	if d.OnNotification != nil {
		c.OnNotification(func(n mcp.JSONRPCNotification) { d.OnNotification(srv.Name, NotificationValue(n)) })
	}
	s := &Session{Server: srv, Client: c, Plugin: p, conn: conn, watch: probe, offersRoots: d.Roots != nil, calls: calls}
	if err := c.Start(ctx); err != nil {
		return fail(s.explain(ctx, "start", err, plan.ConnectTimeout))
	}
	init, proto, err := negotiate(negotiateCtx, c, probe, srv, plan.Remembered)
	if err != nil {
		if g := garbage.Load(); g != nil && ctx.Err() == nil {
			return fail(connectErr(srv.Name, sdk.CodeGarbage, "%s (no answer to initialize followed within %s)", g.Message, garbageGrace))
		}
		return fail(s.explain(ctx, "initialize", err, plan.ConnectTimeout))
	}
	// Connected: later garbage is a warning only.
	garbage.CompareAndSwap(nil, &sdk.Error{})
	s.Init, s.Protocol = init, proto
	if proto.Source != SourcePinned && proto.Revision != plan.Remembered {
		if err := remember(plan.Home, srv, proto.Revision); err != nil {
			d.Logger.Debug("cannot remember the protocol revision", "server", srv.Name, "error", err)
		}
	}
	s.Latency = time.Since(start)
	return s, nil
}

// connectFailure is err, a failure after the plugin started, as a
// *ConnectError (see projectHeadersRefused for dynamic).
func connectFailure(srv *config.Server, err error, dynamic bool) *ConnectError {
	var ce *ConnectError
	if errors.As(err, &ce) {
		return projectHeadersRefused(srv, ce, dynamic)
	}
	var se *sdk.Error
	if errors.As(err, &se) {
		return projectHeadersRefused(srv, &ConnectError{Server: srv.Name, Err: se}, dynamic)
	}
	return connectErr(srv.Name, sdk.CodeOther, "%s", flatten(err))
}

// dispense is the transport of plugin p.
func dispense(p *supervisor.Plugin) (*pluginhost.Transport, error) {
	raw, err := p.Dispense()
	if err != nil {
		return nil, err
	}
	h, ok := raw.(*pluginhost.Transport)
	if !ok {
		return nil, fmt.Errorf("plugin %s is not a transport plugin", p.Path)
	}
	return h, nil
}

// errNoPlan is Connect's answer to a Plan that PlanFor did not make.
var errNoPlan = errors.New("session: Connect was given no plan (PlanFor makes one)")

// credentials are the header and challenge callbacks of the transport:
// d.Headers when set, else, for a plan that needs them (Plan.Auth), the
// credentials of d.Auth, else none.
func (d Deps) credentials(ctx context.Context, plan Plan) (func(context.Context, transport.HeadersRequest) (map[string]string, error), func(context.Context, transport.ChallengeRequest) (transport.ChallengeAnswer, error), error) {
	if d.Headers != nil || d.Auth == nil || !plan.Auth {
		return d.Headers, nil, nil
	}
	creds, err := d.Auth.For(ctx, plan.Server)
	if err != nil {
		code := sdk.AsError(err).Code
		if code == sdk.CodeOther {
			code = sdk.CodeAuth
		}
		return nil, nil, connectErr(plan.Server.Name, code, "%s", flatten(err))
	}
	return creds.Headers, creds.Challenge, nil
}

// launchErr is the failure to start a transport plugin, with its code.
func launchErr(server string, err error) *ConnectError {
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
	return connectErr(server, code, "%s", flatten(err))
}

// dialOptions are the options of the dial through plugin p: its message
// stream and bounds, the transport's header and challenge callbacks, the
// log of warnings (each also given to onWarning) and of undeliverable
// messages, and d.OnClosed told whether the connection was dropped or
// ended by hermes.
func dialOptions(plan Plan, d Deps, p *supervisor.Plugin,
	headers func(context.Context, transport.HeadersRequest) (map[string]string, error),
	challenge func(context.Context, transport.ChallengeRequest) (transport.ChallengeAnswer, error),
	onWarning func(*sdk.Error)) pluginconn.DialOptions {
	name := plan.Server.Name
	opts := pluginconn.DialOptions{TransportOptions: pluginhost.TransportOptions{
		OnWarning: func(w *sdk.Error) {
			d.Logger.Warn(w.Message, "server", name)
			onWarning(w)
		},
		Stream:          p.Stream(),
		MaxMessageBytes: p.Spec().MaxFrameBytes,
		LimitName:       "max_message_mb",
		Headers:         headers,
		Challenge:       challenge,
		PluginExit:      func() string { return p.ExitReason(pluginExitWait) },
	}, MaxServerRequests: plan.Server.MaxServerRequests, RequestsLimitName: "max_server_requests"}
	opts.OnUndeliverable = func(e *sdk.Error) { d.Logger.Debug("message to server failed", "server", name, "error", e.Message) }
	if d.OnClosed != nil {
		opts.OnClosed = func(err *sdk.Error) {
			if p.Stopped() {
				d.OnClosed(name, nil)
				return
			}
			d.OnClosed(name, err)
		}
	}
	return opts
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
