package registry

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/offered"
)

// Lazy start and idle stop (issue 25). In a manager built with
// Options.Lazy (a long-lived process: hermes chat, hermes mcp serve with
// tools), a server whose record of what it offered (package offered) is
// fresh registers its tools from that record and is not started: its
// supervisor.Instance is held (Hold(0)) until the first call wakes it, and
// that call waits for the connection within connect_timeout. A server with
// no call for idle_timeout is stopped gracefully, its Instance held again,
// and its tools stay registered: the next call starts it again. A server
// whose tools differ when it starts is reconciled as after a list_changed.
//
// What decides, per server, in a lazy manager:
//   - start: eager, or no fresh record (the first connection, or settings
//     that changed since): connected at session start as without Lazy,
//     and never stopped when idle if start: eager.
//   - otherwise lazy: StateIdle until the first call.
//   - prestart: true: started in the background at once, without holding
//     up discovery; its tools come from the record meanwhile, or appear
//     when it connects when it has none.

// StateIdle: the server is not running; its tools are registered from its
// record (lazy start) or its last connection (idle stop), and the next
// call starts it.
const StateIdle State = "idle"

// RecordSource returns the fresh record of what srv offered at its last
// connection (lazy start takes its tools, their digests, capabilities and
// when it was listed), or ok false when there is none usable (never
// connected, other settings, damaged).
type RecordSource func(srv *config.Server) (rec *offered.Record, ok bool)

// lazyState is a server's part of lazy start and idle stop.
type lazyState struct {
	// idle is how long the server may go without a call before it is
	// stopped; 0: never.
	idle time.Duration
	// inflight counts calls under way (taken under server.mu with cur).
	inflight int
	// lastUse is when the last call ended or began (UnixNano).
	lastUse atomic.Int64
	// fromRecord: the registered tools came from the record and no
	// connection has confirmed them yet (server.mu).
	fromRecord bool
	// recordAt is when the record was listed; zero without one.
	recordAt time.Time
	// stops counts idle stops; starts counts starts after lazy or idle.
	stops, starts atomic.Int64
}

// lazyPlan decides how s starts: lazy (from rec, held until a call),
// background (prestart: do not hold up discovery), and its idle timeout.
func (m *Manager) lazyPlan(s *server) (rec *offered.Record, lazy, background bool, idle time.Duration) {
	if !m.lazy || s.cfg.Start == config.StartEager {
		return rec, false, false, 0
	}
	idle = s.cfg.IdleAfter()
	records := m.records
	if records == nil && m.off.store != nil {
		records = RecordsFrom(m.off.store)
	}
	if records != nil {
		if r, ok := records(s.cfg); ok && r != nil {
			rec, lazy = r, true
		}
	}
	return rec, lazy, s.cfg.Prestart, idle
}

// prepareLazy applies the lazy plan before the run loop starts; it
// reports whether discovery need not wait for the server. The caller
// rebuilds the registration (Manager.prepare, once for every server).
func (s *server) prepareLazy() (noWait bool) {
	rec, lazy, background, idle := s.m.lazyPlan(s)
	s.lz.idle = idle
	s.touch()
	if lazy {
		s.listMu.Lock()
		s.storeTools(rec.Tools, rec.Capabilities)
		s.listMu.Unlock()
		s.mu.Lock()
		s.lz.fromRecord, s.lz.recordAt = true, rec.FetchedAt
		if !background {
			s.state = StateIdle
		}
		s.mu.Unlock()
		if !background {
			s.inst.Hold(0)
		}
		s.recordDrift(rec.Tools, rec.Digests)
	}
	return lazy || background
}

// recordDrift compares tools, registered from the record, with the
// server's approved baseline as a connection would (by the digests the
// record keeps, not recomputed; offered.Store.ApprovedSame first), so that
// tools.on_change: deny withholds a changed tool of a server that has not
// started yet too. It only reads: without a baseline nothing is withheld
// (the connection that made the record trusted its listing; the next
// connection trusts again); a baseline that cannot be read withholds
// every tool, as a connection would.
func (s *server) recordDrift(tools []mcpvalue.Tool, digests map[string]string) {
	st := s.m.off.store
	if st == nil {
		return
	}
	key := s.cfg.StateKey()
	d := &Drift{Server: s.cfg.Name, OnChange: onChange(s.cfg)}
	// Nothing changed since the tools were approved, the common case, is
	// read by the approval's digests alone; anything else (a change, no
	// approval, one that cannot be read) the long way, which says what.
	if same, err := st.ApprovedSame(key, tools, digests); err != nil || !same {
		b, err := st.Baseline(key)
		if !errors.Is(err, offered.ErrNotFound) {
			d = driftOf(s.cfg, b, err, tools, digests)
		}
	}
	s.m.setDrift(s.cfg, d)
}

// leaveIdle marks an idle server as starting (its Instance was woken).
func (s *server) leaveIdle() {
	s.mu.Lock()
	idle := s.state == StateIdle
	if idle {
		s.state = StateConnecting
		s.err = ""
	}
	s.mu.Unlock()
	if idle {
		s.lz.starts.Add(1)
		s.log.Info("starting on first use")
	}
}

// touch records a use of the server now.
func (s *server) touch() { s.lz.lastUse.Store(s.m.timings.Now().UnixNano()) }

// begin takes the live connection for a call (nil when none) and counts
// the call in flight, in one step with idle stop's check, so a call never
// gets a session idle stop is closing. end must follow.
func (s *server) begin() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lz.inflight++
	s.touch()
	return s.cur
}

// end counts a call that began as ended.
func (s *server) end() {
	s.mu.Lock()
	s.lz.inflight--
	s.mu.Unlock()
	s.touch()
}

// sessionWait is how long a call waits for a session: a server that is
// idle or starting lazily waits out its connect_timeout and listing;
// otherwise SessionWait. Both within the call's timeout.
func (s *server) sessionWait(timeout time.Duration) time.Duration {
	s.mu.Lock()
	starting := s.state == StateIdle || (s.state == StateConnecting && (!s.connected || s.lz.stopped()))
	s.mu.Unlock()
	if starting {
		bound := s.cfg.ConnectTimeout
		if bound <= 0 {
			bound = config.DefaultConnectTimeout
		}
		return min(bound+ListBound(s.cfg), timeout)
	}
	return min(s.m.timings.SessionWait, timeout)
}

// stopped reports whether the server was stopped when idle at least once.
func (l *lazyState) stopped() bool { return l.stops.Load() > 0 }

// idleTimer returns the channel serve watches for idle stop (nil: never)
// and a function that stops it.
func (s *server) idleTimer() (*time.Timer, <-chan time.Time) {
	if s.lz.idle <= 0 {
		return nil, nil
	}
	t := time.NewTimer(s.lz.idle)
	return t, t.C
}

// idleDue decides, when the idle timer fires, whether c is idle: no call
// in flight and none for idle_timeout. If so the session is withdrawn from
// callers (cur is nil from now on, so a new call wakes a new start) and
// true returned; otherwise the timer is set for the rest of the wait.
func (s *server) idleDue(c *conn, t *time.Timer) bool {
	s.mu.Lock()
	since := time.Duration(s.m.timings.Now().UnixNano() - s.lz.lastUse.Load())
	if s.lz.inflight > 0 || since < s.lz.idle || s.cur != c {
		s.mu.Unlock()
		t.Reset(max(s.lz.idle-since, s.lz.idle/4, time.Millisecond))
		return false
	}
	s.cur = nil
	s.state = StateIdle
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	return true
}

// idleStop ends c after idleDue: the session is closed gracefully, the
// tools stay registered, and the Instance is held until a call wakes it.
func (s *server) idleStop(c *conn) {
	s.log.Info("stopped after idle_timeout without a call; the next call starts it again", "idle_timeout", s.lz.idle)
	s.lz.stops.Add(1)
	s.inst.Hold(0)
	s.drop(c)
}

// reconciled is told what a connection's listing changed against the
// registered tools; a server started from its record whose tools changed
// meanwhile is handled as after a list_changed.
func (s *server) reconciled(added, removed []string) {
	s.mu.Lock()
	was := s.lz.fromRecord
	s.lz.fromRecord = false
	s.mu.Unlock()
	if !was || (len(added) == 0 && len(removed) == 0) {
		return
	}
	s.refreshes.Add(1)
	s.log.Warn("tools changed since they were last listed — added: " + joinOrNone(added) + "; removed: " + joinOrNone(removed) +
		". Verify these changes are expected.")
}

// LazyStatus is a server's part of lazy start in Status.
type LazyStatus struct {
	// FromRecord: the registered tools come from the record of an earlier
	// connection and the server has not started in this process since.
	FromRecord bool
	// RecordAt is when that record was listed (zero without one).
	RecordAt time.Time
	// IdleStops counts the times it was stopped after idle_timeout;
	// Starts the times it was started by a call after lazy or idle.
	IdleStops, Starts int64
}

func (s *server) lazyStatus() LazyStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return LazyStatus{FromRecord: s.lz.fromRecord, RecordAt: s.lz.recordAt, IdleStops: s.lz.stops.Load(), Starts: s.lz.starts.Load()}
}
