package registry

import (
	"fmt"
	"strings"

	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/toolview"
)

// Availability says whether a model-visible tool name can be called, and if
// not, why.
type Availability int

const (
	// Available: the tool is registered; Call runs it.
	Available Availability = iota
	// Filtered: the server offers the tool, but its tools.include/exclude
	// removes it.
	Filtered
	// ServerDown: the name belongs to a configured server that is not
	// connected (connecting, failed or parked); Lookup's Code, Reason and
	// Challenge say why when its last connect failed. A tool the server
	// offered before it went down is still called: the call revives the
	// server.
	ServerDown
	// ServerDisabled: the name belongs to a server configured with
	// enabled: false.
	ServerDisabled
	// UnknownServer: no configured server owns the name.
	UnknownServer
	// UnknownTool: the server is connected and offers no such tool.
	UnknownTool
	// Withheld: the server offers the tool, but its definition changed
	// (or it is new) since the person approved the server's tools, and
	// tools.on_change is deny; see Manager.Drift and AcceptDrift.
	Withheld
)

// String names the availability.
func (a Availability) String() string {
	switch a {
	case Available:
		return "available"
	case Filtered:
		return "filtered"
	case ServerDown:
		return "server down"
	case ServerDisabled:
		return "server disabled"
	case UnknownServer:
		return "unknown server"
	case UnknownTool:
		return "unknown tool"
	case Withheld:
		return "withheld (changed)"
	}
	return fmt.Sprintf("Availability(%d)", int(a))
}

// Lookup is what the registry knows about one model-visible tool name.
type Lookup struct {
	Name         string
	Availability Availability
	// Server is the configured server the name belongs to; "" for
	// UnknownServer.
	Server string
	// Def is the registered tool (Available).
	Def toolview.ToolDef
	// Code is the sdk error code of a ServerDown server's last failed
	// connect, Reason that failure in one line (redacted), and Challenge
	// the WWW-Authenticate of its 401/403; all "" while it has not failed.
	Code, Reason, Challenge string
	// rec is where a call of an Available name goes.
	rec *callRecord
	// ref is where a withdrawn tool of a ServerDown server leads.
	ref *toolview.ToolRef
	// held is the refusal of a Withheld tool.
	held error
}

// Lookup says whether the model-visible tool name can be called and, if
// not, why: without calling anything.
func (m *Manager) Lookup(name string) Lookup {
	snap := m.snap.Load()
	l := Lookup{Name: name}
	if i, ok := snap.byName[name]; ok {
		l.Availability, l.Def, l.Server, l.rec = Available, snap.def(i), snap.recs[i].srv.cfg.Name, &snap.recs[i]
		return l
	}
	if srv, ok := snap.filtered[name]; ok {
		l.Availability, l.Server = Filtered, srv
		return l
	}
	if r, ok := snap.held[name]; ok {
		l.Availability, l.Server, l.held = Withheld, r.Server, m.driftError(r.Server, r.Tool)
		if l.held != nil {
			return l
		}
	}
	var s *server
	if r, ok := snap.withdrawn[name]; ok {
		l.ref, l.Server = &r, r.Server
		s = m.server(r.Server)
	} else {
		s = m.owner(name)
	}
	if s == nil {
		l.Availability = UnknownServer
		return l
	}
	l.Server = s.cfg.Name
	s.mu.Lock()
	state, reason, code, challenge := s.state, s.err, s.errCode, s.challenge
	s.mu.Unlock()
	switch {
	case state == StateDisabled:
		l.Availability = ServerDisabled
	case state == StateConnected && l.ref == nil:
		l.Availability = UnknownTool
	default:
		l.Availability = ServerDown
		if code != "" || state != StateConnecting {
			l.Code, l.Reason, l.Challenge = code, reason, challenge
		}
	}
	return l
}

// owner returns the configured server whose tool names name starts with
// (the longest such prefix), or nil.
func (m *Manager) owner(name string) *server {
	m.mu.Lock()
	defer m.mu.Unlock()
	var best *server
	bestLen := 0
	for _, s := range m.order {
		prefix := toolview.ToolName(s.cfg.Name, "")
		if len(prefix) > bestLen && strings.HasPrefix(name, prefix) {
			best, bestLen = s, len(prefix)
		}
	}
	return best
}

// Err is the *CallError Call reports for a name it cannot run, its Code
// the reason (failure.CodeFiltered, CodeNoSuchTool, CodeUnknownServer,
// CodeDisabled, or the code of a down server's failure, CodeDown while it
// has none); nil when l is Available.
func (l Lookup) Err() error {
	code := failure.CodeNoSuchTool
	switch l.Availability {
	case Available:
		return nil
	case Withheld:
		return l.held
	case Filtered:
		return &CallError{Server: l.Server, Tool: l.Name, Code: failure.CodeFiltered,
			Msg: fmt.Sprintf("tool %s is not available: it is filtered by tools.include/exclude of server %s", l.Name, l.Server)}
	case ServerDown:
		code = failure.CodeDown
		if l.Code != "" {
			code = failure.Code(l.Code)
		}
	case ServerDisabled:
		code = failure.CodeDisabled
	case UnknownServer:
		code = failure.CodeUnknownServer
	}
	return &CallError{Server: l.Server, Tool: l.Name, Code: code, Msg: fmt.Sprintf("tool %s is not available: no such tool", l.Name)}
}
