package registry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/logfile"
	"github.com/mark3labs/mcp-go/mcp"
)

// State is where a server is in its life.
type State string

// Server states, as Status reports them.
const (
	// StateDisabled: enabled: false; never connected.
	StateDisabled State = "disabled"
	// StateConnecting: a first connect or a reconnect is under way (Error
	// says why the last attempt failed, if one did). A server reconnecting
	// after a drop keeps its tools registered.
	StateConnecting State = "connecting"
	// StateConnected: a live session; its tools are registered.
	StateConnected State = "connected"
	// StateFailed: the first connect failed (all attempts, or an error that
	// is not retried); no tools. Retried like a parked server, except that
	// auth, missing-executable and config errors wait for an explicit
	// trigger (Reload, Reconnect or a tool call).
	StateFailed State = "failed"
	// StateParked: reconnects after a good connect were exhausted; its
	// tools are withdrawn until a retry (every ParkedRetry, or at once on
	// Reload, Reconnect or a tool call) succeeds.
	StateParked State = "parked"
)

// conn is one live session of a server.
type conn struct {
	sess *session.Session
	// req is closed to ask the serving loop to drop this session and
	// reconnect at once.
	req     chan struct{}
	reqOnce sync.Once
}

func (c *conn) requestReconnect() { c.reqOnce.Do(func() { close(c.req) }) }

// dead reports whether the session has already ended.
func (c *conn) dead() bool {
	select {
	case <-c.sess.Done():
		return true
	default:
		return false
	}
}

// server is the live state of one configured server: its run loop
// (connect, serve, reconnect, park), its tools and its breaker.
type server struct {
	m      *Manager
	cfg    *config.Server
	log    hclog.Logger
	filter toolview.Filter
	brk    *breaker

	ctx    context.Context
	cancel context.CancelFunc
	// wake cuts short a backoff or parked wait (cap 1).
	wake chan struct{}
	// done is closed when the run loop has exited.
	done chan struct{}
	// first is closed when the first connect attempt has an outcome.
	first     chan struct{}
	firstOnce sync.Once

	// refreshKick wakes the refresher (cap 1); dirty says a list_changed
	// arrived since the last refresh started.
	refreshKick chan struct{}
	dirty       atomic.Bool
	refreshes   atomic.Int64
	// listMu orders tool listings so an older list never replaces a newer.
	listMu sync.Mutex

	// logLimit bounds the server's log notifications written to the host
	// log (logfile.DefaultRate a second, bursts of logfile.DefaultBurst).
	logLimit *logfile.Limiter

	mu        sync.Mutex
	state     State
	cur       *conn
	changed   chan struct{}      // closed and replaced whenever cur changes
	err       string             // why the last attempt failed (one line, redacted)
	connected bool               // a session was up at least once
	listed    bool               // tools holds a successful listing
	tools     []mcp.Tool         // all tools the server offers, as last listed
	defs      []toolview.ToolDef // toolview.ConvertTool of each of tools
	caps      mcp.ServerCapabilities
	descSeen  map[string]string
}

func newServer(m *Manager, cfg *config.Server) *server {
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{
		m:           m,
		cfg:         cfg,
		log:         m.log.Named(cfg.Name),
		filter:      toolview.Filter{Include: cfg.Tools.Include, Exclude: cfg.Tools.Exclude},
		brk:         newBreaker(m.timings),
		ctx:         ctx,
		cancel:      cancel,
		wake:        make(chan struct{}, 1),
		done:        make(chan struct{}),
		first:       make(chan struct{}),
		refreshKick: make(chan struct{}, 1),
		changed:     make(chan struct{}),
		state:       StateConnecting,
		descSeen:    map[string]string{},
		logLimit:    logfile.NewLimiter(logfile.DefaultRate, logfile.DefaultBurst),
	}
	s.logLimit.Now = m.timings.Now
	switch {
	case !cfg.Enabled:
		s.state = StateDisabled
	case cfg.Err != nil:
		s.state = StateFailed
		s.err = toolview.Redact(oneLine(cfg.Err.Error()))
	}
	return s
}

// start runs the server's loops; a disabled or invalid server has none.
func (s *server) start() {
	if s.state != StateConnecting {
		close(s.done)
		s.finishFirst()
		return
	}
	go s.run()
	go s.refresher()
}

// stop ends the loops and the session, waiting at most d, and reports the
// server's log lines dropped since the last one written.
func (s *server) stop(d time.Duration) {
	s.cancel()
	select {
	case <-s.done:
	case <-time.After(d):
		s.log.Warn("server did not stop in time", "wait", d)
	}
	s.logDropped(s.logLimit.Flush(s.cfg.Name))
}

func (s *server) finishFirst() { s.firstOnce.Do(func() { close(s.first) }) }

// kick wakes the run loop from a backoff or parked wait.
func (s *server) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// endReason says why serving a session stopped.
type endReason int

const (
	endStopped   endReason = iota // the manager is closing
	endLost                       // the connection ended on its own
	endRequested                  // a reconnect was asked for (expired session, keepalive)
)

// run is the server's life: connect, serve until the session ends,
// reconnect with backoff, park when reconnects are exhausted.
func (s *server) run() {
	defer close(s.done)
	defer s.finishFirst()
	t := s.m.timings
	failures := 0
	for {
		c, err := s.connect()
		if s.ctx.Err() != nil {
			if c != nil {
				_ = c.sess.Close()
			}
			return
		}
		if err == nil {
			failures = 0
			s.publish(c)
			why := s.serve(c)
			s.drop(c)
			if why == endStopped || s.ctx.Err() != nil {
				return
			}
			// A drop counts as a disconnect: reconnect at once, back off
			// only if that fails.
			continue
		}
		reason := toolview.Redact(oneLine(err.Error()))
		retry := retryable(err)
		failures++
		s.mu.Lock()
		everConnected := s.connected
		s.mu.Unlock()
		limit := t.InitialConnectAttempts
		if everConnected {
			limit = t.MaxReconnects
		}
		if !retry || failures >= limit {
			st := StateFailed
			if everConnected {
				st = StateParked
			}
			s.park(st, reason, retry)
			s.finishFirst()
			wait := t.ParkedRetry
			if !retry {
				wait = 0
			}
			if !s.sleep(wait) {
				return
			}
			// Each wake is a single attempt: a server still down parks again.
			failures = limit - 1
			continue
		}
		s.mu.Lock()
		s.state = StateConnecting
		s.err = reason
		s.mu.Unlock()
		s.finishFirst()
		d := t.backoff(failures)
		s.log.Warn("connect failed; retrying", "attempt", failures, "of", limit, "in", d, "error", reason)
		if !s.sleep(d) {
			return
		}
	}
}

// sleep waits d (0: until woken), a wake or the end. It reports false when
// the server is stopping.
func (s *server) sleep(d time.Duration) bool {
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-s.ctx.Done():
		return false
	case <-s.wake:
	case <-timer:
	}
	return true
}

// retryable reports whether a failed connect is worth retrying with
// backoff: not for auth, a missing executable or a bad config entry.
func retryable(err error) bool {
	var ce *session.ConnectError
	if errors.As(err, &ce) {
		switch ce.Code {
		case sdk.CodeAuth, sdk.CodeNotFound, sdk.CodeConfig:
			return false
		}
		return true
	}
	var se *sdk.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sdk.CodeAuth, sdk.CodeNotFound, sdk.CodeConfig:
			return false
		}
	}
	var le *listError
	if errors.As(err, &le) {
		return true
	}
	// A config error from the entry itself, or a plugin that cannot be
	// found, will not fix itself.
	return !errors.Is(err, errConfig)
}

// errConfig marks an unusable server entry.
var errConfig = errors.New("config error")

// listError is a session that connected but could not list its tools; its
// error says so (see ListTools).
type listError struct{ err error }

func (e *listError) Error() string { return e.err.Error() }
func (e *listError) Unwrap() error { return e.err }

// connect opens a session and prepares it: log level, tools. A failure
// after the handshake closes the session.
func (s *server) connect() (*conn, error) {
	sess, err := session.Connect(s.ctx, s.cfg, s.deps())
	if err != nil {
		var ce *session.ConnectError
		var se *sdk.Error
		if !errors.As(err, &ce) && !errors.As(err, &se) && s.cfg.Err == nil && isPluginMissing(err) {
			return nil, fmt.Errorf("%w: %v", errConfig, err)
		}
		return nil, err
	}
	c := &conn{sess: sess, req: make(chan struct{})}
	caps := sess.Init.Capabilities
	if caps.Logging != nil {
		level := mcp.LoggingLevelInfo
		if s.log.IsDebug() {
			level = mcp.LoggingLevelDebug
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.m.timings.ProbeTimeout)
		if err := sess.Client.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: level}}); err != nil {
			s.log.Debug("logging/setLevel refused", "error", toolview.Redact(err.Error()))
		}
		cancel()
	}
	if caps.Tools != nil {
		s.mu.Lock()
		if s.state == StateConnecting && s.err == "" {
			// What a status shows while the listing is pending.
			s.err = "initialized; waiting for the answer to tools/list"
		}
		s.mu.Unlock()
		s.listMu.Lock()
		tools, err := s.listTools(sess)
		if err == nil {
			s.storeTools(tools, caps)
		}
		s.listMu.Unlock()
		if err != nil {
			_ = sess.Close()
			return nil, &listError{err}
		}
	} else {
		s.listMu.Lock()
		s.storeTools(nil, caps)
		s.listMu.Unlock()
	}
	return c, nil
}

// isPluginMissing reports whether Connect failed because the transport
// plugin binary does not exist (supervisor.Find).
func isPluginMissing(err error) bool {
	return err != nil && containsFold(err.Error(), "not found in")
}

// deps are the session dependencies of this server: the manager's, with
// notification and close handlers bound to this server.
func (s *server) deps() session.Deps {
	d := s.m.deps
	userNote, userClosed := d.OnNotification, d.OnClosed
	d.Logger = s.m.log
	d.OnNotification = func(name string, n mcp.JSONRPCNotification) {
		s.onNotification(n)
		if userNote != nil {
			userNote(name, n)
		}
	}
	d.OnClosed = func(name string, err error) {
		if err != nil {
			s.log.Warn("connection ended", "error", toolview.Redact(oneLine(err.Error())))
		}
		if userClosed != nil {
			userClosed(name, err)
		}
	}
	return d
}

// publish makes c the server's session and registers its tools.
func (s *server) publish(c *conn) {
	s.mu.Lock()
	s.cur = c
	s.state = StateConnected
	s.err = ""
	s.connected = true
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	// A wake asked for while connecting is answered.
	select {
	case <-s.wake:
	default:
	}
	s.brk.reset()
	s.m.rebuild()
	s.log.Info("connected", "latency", c.sess.Latency.Round(time.Millisecond), "tools", len(s.m.serverNames(s.cfg.Name)))
	s.finishFirst()
}

// drop forgets c (its tools stay registered while reconnecting) and
// closes it.
func (s *server) drop(c *conn) {
	s.mu.Lock()
	if s.cur == c {
		s.cur = nil
		if s.state == StateConnected {
			s.state = StateConnecting
		}
		close(s.changed)
		s.changed = make(chan struct{})
	}
	s.mu.Unlock()
	if s.m.detach.Load() {
		c.sess.Detach()
		return
	}
	_ = c.sess.Close()
}

// park withdraws the server's tools after its attempts are exhausted.
func (s *server) park(st State, reason string, retry bool) {
	s.mu.Lock()
	s.state = st
	s.err = reason
	s.mu.Unlock()
	s.m.rebuild()
	if retry {
		s.log.Warn("server unreachable; tools withdrawn, retrying in background", "state", st, "retry_every", s.m.timings.ParkedRetry, "error", reason)
	} else {
		s.log.Error("server cannot be connected; not retried until reload or a tool call", "error", reason)
	}
}

// serve watches c: its end, reconnect requests and the keepalive.
func (s *server) serve(c *conn) endReason {
	interval := s.cfg.KeepaliveInterval
	if interval <= 0 {
		interval = config.DefaultKeepaliveInterval
	}
	timer := time.NewTimer(interval)
	defer timer.Stop()
	pingUnsupported := false
	for {
		select {
		case <-s.ctx.Done():
			return endStopped
		case <-c.sess.Done():
			s.log.Warn("connection lost; reconnecting", "error", errText(c.sess.Err()))
			return endLost
		case <-c.req:
			s.log.Info("reconnect requested")
			return endRequested
		case <-timer.C:
			if err := s.keepalive(c, &pingUnsupported); err != nil {
				if s.ctx.Err() != nil {
					return endStopped
				}
				s.log.Warn("keepalive failed; reconnecting", "error", toolview.Redact(oneLine(err.Error())))
				return endRequested
			}
			timer.Reset(interval)
		}
	}
}

// keepalive probes the session: ping, or tools/list once the server said
// it does not know ping (and has tools). A server with neither is not
// probed.
func (s *server) keepalive(c *conn, pingUnsupported *bool) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.m.timings.ProbeTimeout)
	defer cancel()
	return probe(ctx, c.sess.Client, c.sess.Init.Capabilities.Tools != nil, pingUnsupported)
}

// pinger is the part of an MCP client the keepalive uses.
type pinger interface {
	Ping(ctx context.Context) error
	ListToolsByPage(ctx context.Context, req mcp.ListToolsRequest) (*mcp.ListToolsResult, error)
}

// probe runs one keepalive probe on cl. When ping is answered with "method
// not found" it latches *pingUnsupported and, for a server with tools,
// uses tools/list from then on; a server with neither is not probed.
func probe(ctx context.Context, cl pinger, hasTools bool, pingUnsupported *bool) error {
	if !*pingUnsupported {
		err := cl.Ping(ctx)
		if err == nil || !isMethodNotFound(err) {
			return err
		}
		*pingUnsupported = true
	}
	if !hasTools {
		return nil
	}
	_, err := cl.ListToolsByPage(ctx, mcp.ListToolsRequest{})
	return err
}

// isMethodNotFound reports a JSON-RPC -32601 reply, or a message saying the
// same.
func isMethodNotFound(err error) bool {
	if errors.Is(err, mcp.ErrMethodNotFound) {
		return true
	}
	msg := err.Error()
	for _, m := range []string{"method not found", "unknown method", "not found: ping", "-32601"} {
		if containsFold(msg, m) {
			return true
		}
	}
	return false
}

// current returns the live connection, or nil.
func (s *server) current() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// waitConn waits up to d for a live connection other than old (nil: any).
func (s *server) waitConn(ctx context.Context, old *conn, d time.Duration) *conn {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		s.mu.Lock()
		c, ch := s.cur, s.changed
		s.mu.Unlock()
		if c != nil && c != old && !c.dead() {
			return c
		}
		select {
		case <-ch:
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return nil
		case <-s.ctx.Done():
			return nil
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return toolview.Redact(oneLine(err.Error()))
}
