package registry

import (
	"context"
	"slices"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/toolview"
)

// One call from the record (issue 36). A command that calls one tool of
// one server and exits ('hermes mcp call') says so before Start
// (Manager.ForCall). Its server's connection then registers the tools of
// the server's record of what it offered (package offered) instead of
// asking tools/list, when all of these hold:
//
//   - the record is fresh (made with the entry's current settings) and
//     lists the tool;
//   - the approval approves exactly the record's tools, by their digests
//     (offered.Store.ApprovedSame): nothing in the record is changed, new
//     or unapproved, and the approval can be read;
//   - the server's tools.on_change is warn, under which a changed tool is
//     kept and called anyway;
//   - the session offers tools.
//
// The call then goes out after one round trip (the answer to
// logging/setLevel, or a ping: a server that asks the host for its roots
// once initialized has its answer before the call), and the record is left
// as it was (nothing was listed, so nothing is recorded). Otherwise
// (on_change: deny, no approval yet or one that cannot be read, a record
// that differs from the approval, lacks the tool or is missing) the
// connection lists first, as every other connection does, so the drift
// gate holds: a changed or new tool is compared with the approval before
// any call, and one that tools.on_change: deny withholds is refused. What
// a one-shot call under warn gives up is the warning about a change the
// server made since its record; the next listing (hermes tools --live,
// hermes mcp test, a chat's first start of the server) reports it.

// oneCall is the call a manager serves (Manager.ForCall).
type oneCall struct {
	// server is the configured server's name, tool the tool's MCP name.
	server, tool string
}

// ForCall tells m, before Start, that it serves one call of tool (the
// server's MCP name for it) of server and is then closed: see the comment
// at the top of this file. It has no effect on a manager that is not a
// snapshot (Options.Snapshot) or has started.
//
// The server's transport plugin starts at once (prelaunch), so that its
// start overlaps the rest of the command's work until the connection asks
// for it.
func (m *Manager) ForCall(server, tool string) {
	m.mu.Lock()
	if !m.snapshot || m.started {
		m.mu.Unlock()
		return
	}
	m.call = &oneCall{server: server, tool: tool}
	s := m.byName[server]
	m.mu.Unlock()
	if s != nil {
		s.prelaunch()
	}
}

// prelaunch starts s's transport plugin ahead of its connection
// (supervisor.Prelaunch), with the config of its Open for a local server,
// which the plugin opens at once (it starts the server while its own
// handshake runs): the connection's Launch of the same plan takes the
// plugin, and its Open the connection. Only a server that will connect is prelaunched: enabled, its entry
// sound and admitted (a refused plan starts nothing).
func (s *server) prelaunch() {
	sup := s.m.deps.Supervisor
	s.mu.Lock()
	connecting := s.state == StateConnecting && !s.rejected
	s.mu.Unlock()
	if sup == nil || !connecting {
		return
	}
	plan := session.PlanFor(s.firstConnect(), s.m.deps.Home, s.m.deps.Environ)
	if plan.Refused != nil {
		return
	}
	sup.Prelaunch(plan.Spec, plan.EarlyOpenConfig())
}

// callRecord starts reading, in the background, the record s's
// connection may register its tools from instead of listing them (see
// oneCall); the channel gives it, or nil when the connection lists. Nil
// channel: s is not the server of the manager's one call.
func (s *server) callRecord() <-chan *offered.Record {
	s.m.mu.Lock()
	call := s.m.call
	s.m.mu.Unlock()
	st := s.m.off.store
	if call == nil || call.server != s.cfg.Name || st == nil || onChange(s.cfg) == config.OnChangeDeny {
		return nil
	}
	out := make(chan *offered.Record, 1)
	go func() { out <- recordFor(st, s.cfg, call.tool) }()
	return out
}

// recordFor returns srv's record when a call of tool may take it as the
// listing: fresh, listing tool, and approved exactly; nil otherwise.
func recordFor(st *offered.Store, srv *config.Server, tool string) *offered.Record {
	rec, err := st.Load(srv)
	if err != nil || !slices.ContainsFunc(rec.Tools, func(t mcpvalue.Tool) bool { return t.Name == tool }) {
		return nil
	}
	if same, err := st.ApprovedSame(srv.StateKey(), rec.Tools, rec.Digests); err != nil || !same {
		return nil
	}
	return rec
}

// registerRecord registers rec's tools as the listing of the session whose
// capabilities are caps (caller: connect, for the manager's one call):
// nothing drifted (recordFor checked the approval), and nothing is
// recorded.
func (s *server) registerRecord(rec *offered.Record, caps mcpvalue.Capabilities) {
	s.listMu.Lock()
	s.storeTools(rec.Tools, caps)
	s.listMu.Unlock()
	s.mu.Lock()
	s.lz.fromRecord, s.lz.recordAt = true, rec.FetchedAt
	s.mu.Unlock()
	s.m.setDrift(s.cfg, &Drift{Server: s.cfg.Name, OnChange: onChange(s.cfg)})
	s.log.Debug("tools registered from the record for one call; tools/list not sent", "tools", len(rec.Tools), "listed", rec.FetchedAt)
}

// setLevel asks sess for the run's log level when the server offers
// logging, without waiting for the answer: the returned function waits
// for it (within ProbeTimeout), so that the level's round trip overlaps
// the listing. A refusal is logged and otherwise ignored.
func (s *server) setLevel(ctx context.Context, sess *session.Session) (wait func()) {
	if sess.Capabilities().Logging == nil {
		return func() {}
	}
	level := "info"
	if s.log.IsDebug() {
		level = "debug"
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(ctx, s.m.timings.ProbeTimeout)
		defer cancel()
		if err := sess.SetLogLevel(ctx, level); err != nil {
			s.log.Debug("logging/setLevel refused", "error", toolview.Redact(err.Error()))
		}
	}()
	return func() { <-done }
}
