package registry

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/screening"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/logfile"
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
	// trigger (Reload, Reconnect or a tool call). An entry the security
	// check rejects (package screening) is failed from the start and never
	// started; Error says why ("rejected: ...").
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

	// rejected: the security policy refused the entry (screening); it
	// never runs.
	rejected bool

	ctx    context.Context
	cancel context.CancelFunc
	// inst starts the server's sessions: one at a time, after the
	// backoff of failed attempts or a park (Hold), at once when woken.
	inst *supervisor.Instance[*conn]
	// done is closed when the run loop has exited; refreshDone when the
	// refresher has (a refresh writes the store: Close waits for it).
	done        chan struct{}
	refreshDone chan struct{}
	// first is closed when the first connect attempt has an outcome.
	first     chan struct{}
	firstOnce sync.Once

	// refreshKick wakes the refresher (cap 1); dirty says a list_changed
	// arrived since the last refresh started.
	refreshKick chan struct{}
	dirty       atomic.Bool
	refreshes   atomic.Int64
	// progress routes progress notifications to running calls.
	progress progressRoutes
	// listMu orders tool listings so an older list never replaces a newer.
	listMu sync.Mutex

	// logLimit bounds the server's log notifications written to the host
	// log (log_lines_per_second, bursts of log_burst).
	logLimit *logfile.Limiter

	mu         sync.Mutex
	state      State
	cur        *conn
	changed    chan struct{}   // closed and replaced whenever cur changes
	err        string          // why the last attempt failed (one line, redacted)
	errCode    string          // the sdk error code of that failure, if it had one
	challenge  string          // the WWW-Authenticate of that failure's 401/403, if any
	httpStatus int             // that failure's HTTP status, if any
	connected  bool            // a session was up at least once
	listed     bool            // tools holds a successful listing
	tools      []mcpvalue.Tool // all tools the server offers, as last listed
	defs       *toolDefs       // toolview.ConvertTool of each of tools, on first use
	caps       mcpvalue.Capabilities
	descSeen   map[string]string
	// instructions are what the last session said in initialize.
	instructions string

	// lz is the server's lazy start and idle stop (lazy.go).
	lz lazyState
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
		done:        make(chan struct{}),
		refreshDone: make(chan struct{}),
		first:       make(chan struct{}),
		refreshKick: make(chan struct{}, 1),
		changed:     make(chan struct{}),
		state:       StateConnecting,
		descSeen:    map[string]string{},
		logLimit:    logfile.NewLimiter(cfg.LogLinesPerSecond, cfg.LogBurst),
	}
	s.logLimit.Now = m.timings.Now
	s.inst = supervisor.NewInstance(s.open, supervisor.InstanceOptions{
		Backoff:        m.timings.backoff(),
		HealthyOnStart: true,
	})
	switch {
	case !cfg.Enabled:
		s.state = StateDisabled
	case cfg.Err != nil:
		s.state = StateFailed
		s.err = toolview.Redact(oneLine(cfg.Err.Error()))
	default:
		// An entry the security policy rejects is never started, and not
		// retried: only a changed entry (Reload) is looked at again.
		if err := screening.Admit(cfg); err != nil {
			s.state = StateFailed
			s.rejected = true
			s.err = toolview.Redact(oneLine(err.Error()))
			s.errCode = sdk.CodeConfig
			s.log.Error("server rejected by the security check; not started", "error", s.err)
		} else if err := cfg.AdmitOrigin(); err != nil {
			// A project file's entry the person has not approved as it is
			// now: never started, nor offered from an old record.
			s.state = StateFailed
			s.rejected = true
			s.err = oneLine(err.Error())
			s.errCode = sdk.CodeConfig
			s.log.Info("project server not approved; not started")
		}
	}
	return s
}

// start runs the server's loops; a disabled, invalid or rejected server
// has none.
func (s *server) start(plan startPlan) {
	if plan == planOff {
		close(s.done)
		close(s.refreshDone)
		s.finishFirst()
		return
	}
	if plan == planNoWait {
		s.finishFirst()
	}
	go s.run()
	go s.refresher()
}

// stop ends the loops and the session, waiting at most d, and reports the
// server's log lines dropped since the last one written.
func (s *server) stop(d time.Duration) {
	s.cancel()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for _, ch := range []chan struct{}{s.done, s.refreshDone} {
		select {
		case <-ch:
			continue
		case <-deadline.C:
			s.log.Warn("server did not stop in time", "wait", d)
		}
		break
	}
	s.logDropped(s.logLimit.Flush(s.cfg.Name))
}

func (s *server) finishFirst() { s.firstOnce.Do(func() { close(s.first) }) }

// kick wakes the run loop from a backoff or parked wait.
func (s *server) kick() { s.inst.Wake() }

// endReason says why serving a session stopped.
type endReason int

const (
	endStopped   endReason = iota // the manager is closing
	endLost                       // the connection ended on its own
	endRequested                  // a reconnect was asked for (expired session, keepalive)
	endIdle                       // no call for idle_timeout: stopped until the next call
)

// run is the server's life: connect, serve until the session ends,
// reconnect with backoff, park when reconnects are exhausted. Starting a
// session (one at a time, the backoff between failed attempts, a wake
// cutting a wait short) is the server's supervisor.Instance; run decides
// what a failure means for the server (retry, park, give up until asked).
func (s *server) run() {
	defer close(s.done)
	defer s.finishFirst()
	defer s.inst.Close()
	t := s.m.timings
	for {
		c, _, err := s.inst.Get(s.ctx)
		if s.ctx.Err() != nil {
			if c != nil {
				s.inst.Forget(c.sess.Plugin)
				_ = c.sess.Close()
			}
			return
		}
		if err == nil {
			s.publish(c)
			why := s.serve(c)
			if why == endIdle {
				s.idleStop(c)
				continue
			}
			s.drop(c)
			if why == endStopped || s.ctx.Err() != nil {
				return
			}
			// A drop counts as a disconnect: reconnect at once
			// (HealthyOnStart), back off only if that fails.
			continue
		}
		reason := toolview.Redact(oneLine(err.Error()))
		retry := retryable(err)
		failures, wait := s.inst.Failures()
		code, status, challenge := failureCode(err)
		s.mu.Lock()
		everConnected := s.connected
		s.errCode, s.challenge, s.httpStatus = code, challenge, status
		s.mu.Unlock()
		limit := t.InitialConnectAttempts
		if everConnected {
			limit = t.MaxReconnects
		}
		if s.m.snapshot {
			// A command that lists or calls once reports the first
			// attempt and exits: a retry nobody waits for would only
			// log "retrying" before the command says it failed.
			limit = 1
		}
		if !retry || failures >= limit {
			st := StateFailed
			if everConnected {
				st = StateParked
			}
			// Parked: each wake (or ParkedRetry) is a single attempt,
			// since the failures in a row stay at the limit or over.
			if retry {
				s.inst.Hold(t.ParkedRetry)
			} else {
				s.inst.Hold(0)
			}
			s.park(st, reason, retry)
			s.finishFirst()
			continue
		}
		s.mu.Lock()
		s.state = StateConnecting
		s.err = reason
		s.mu.Unlock()
		s.finishFirst()
		s.log.Warn("connect failed; retrying", "attempt", failures, "of", limit, "in", wait, "error", reason)
	}
}

// publish makes c the server's session and registers its tools; only then
// are the callers waiting for the session released, so that one whose call
// woke the server finds its tools registered.
func (s *server) publish(c *conn) {
	s.mu.Lock()
	s.state = StateConnected
	s.err, s.errCode, s.challenge, s.httpStatus = "", "", "", 0
	s.connected = true
	s.mu.Unlock()
	s.brk.reset()
	s.m.rebuild()
	s.mu.Lock()
	s.cur = c
	s.instructions = c.sess.Instructions()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	s.m.changed(Change{Server: s.cfg.Name, Lists: ChangedResources | ChangedPrompts})
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
	s.inst.Forget(c.sess.Plugin)
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
	switch {
	case s.m.snapshot:
		// The command reports it and exits; nothing is retried.
		s.log.Warn("server cannot be connected", "error", reason)
	case retry:
		s.log.Warn("server unreachable; tools withdrawn, retrying in background", "state", st, "retry_every", s.m.timings.ParkedRetry, "error", reason)
	default:
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
	idle, idleC := s.idleTimer()
	if idle != nil {
		defer idle.Stop()
	}
	pingUnsupported := false
	for {
		select {
		case <-s.ctx.Done():
			return endStopped
		case <-c.sess.Done():
			if c.sess.Plugin.Stopped() {
				// hermes stopped the plugin (it is exiting): not a loss.
				s.log.Debug("connection ended: its plugin was stopped by hermes")
			} else {
				s.log.Warn("connection lost; reconnecting", "error", errText(c.sess.Err()))
			}
			return endLost
		case <-c.req:
			s.log.Info("reconnect requested")
			return endRequested
		case <-idleC:
			if s.idleDue(c, idle) {
				return endIdle
			}
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
