package registry

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/host/toolview"
)

// This file keeps the store of what each server offered (package offered)
// up to date and applies tool-definition drift: on every successful
// connection and every tools/list_changed the registry records the
// listing, trusts it on first use when no baseline was approved, compares
// it with the baseline, reports what changed, and with tools.on_change:
// deny withholds changed and new tools from the model until accepted.

// Drift is one server's tools whose definitions differ from the approved
// ones (package offered's baseline).
type Drift struct {
	Server string
	// OnChange is the server's tools.on_change (warn or deny).
	OnChange string
	// Changes are the changed, added and removed tools, by name.
	Changes []offered.Change
	// Withheld lists the tools (the server's names) kept from the model
	// because of Changes (on_change: deny), or because the approval could
	// not be read (Unreadable).
	Withheld []string
	// Unreadable is set when the server's tools were approved but the
	// approval cannot be read (damaged, oversized, ...): one line naming
	// the file and what to do. Every tool is then reported as new and
	// withheld, whatever tools.on_change says, rather than trusted afresh.
	Unreadable string
}

// offeredState is the manager's part of the store: the store itself and
// each server's drift as last compared.
type offeredState struct {
	store *offered.Store
	mu    sync.Mutex
	drift map[string]*Drift
	// warned holds "server/tool/digest" of changes already logged.
	warned map[string]bool
	// digests are each server's tool digests at its last listing.
	digests map[string]map[string]string
}

func (o *offeredState) init(home string, log hclog.Logger) {
	o.drift = map[string]*Drift{}
	o.warned = map[string]bool{}
	o.digests = map[string]map[string]string{}
	if home != "" {
		o.store = offered.Open(home, log.Named("offered"))
	}
}

// Offered returns the store the registry records what servers offered
// in, nil when the manager has no home.
func (m *Manager) Offered() *offered.Store { return m.off.store }

// Instructions returns the instructions server name sent in initialize,
// as they were sent (hostile text: the caller bounds and escapes them):
// those of its session in this run, else, for a server not connected yet
// in this run (lazy start), those of its record of what it offered. ""
// for an unknown server or one without instructions.
func (m *Manager) Instructions(name string) string {
	s := m.server(name)
	if s == nil {
		return ""
	}
	s.mu.Lock()
	text, connected := s.instructions, s.connected
	s.mu.Unlock()
	if connected || m.off.store == nil {
		return text
	}
	rec, err := m.off.store.Load(s.cfg)
	if err != nil {
		return ""
	}
	return rec.Instructions
}

// RecordOffered records what srv offered on sess (tools: its whole
// listing) in store, trusts the listing as srv's baseline when none was
// approved yet (first use), and returns how the listing differs from the
// baseline. A record that cannot be written is an error; the drift is
// still returned.
func RecordOffered(store *offered.Store, srv *config.Server, sess *session.Session, tools []mcpvalue.Tool) (*Drift, error) {
	rec := &offered.Record{
		Server: srv.StateKey(), SettingsDigest: offered.SettingsDigest(srv), Protocol: sess.Revision(),
		ServerInfo: sess.ServerInfo(), Instructions: sess.Instructions(), Capabilities: sess.Capabilities(),
		Tools: tools,
	}
	saveErr := store.Save(rec)
	d, err := CompareOffered(store, srv, tools, true)
	return d, errors.Join(saveErr, err)
}

// CompareOffered compares tools (srv's current listing) with srv's
// approved baseline in store. With trust, a server without a baseline has
// tools recorded as its baseline first (trust on first use), so nothing
// drifted; without, every tool is new. A baseline that exists but cannot
// be read is never taken for a missing one: every tool is withheld and
// Drift.Unreadable says why (the error is returned too).
func CompareOffered(store *offered.Store, srv *config.Server, tools []mcpvalue.Tool, trust bool) (*Drift, error) {
	var b *offered.Baseline
	var err error
	if trust {
		b, _, err = store.Trust(srv.StateKey(), tools)
	} else {
		b, err = store.Baseline(srv.StateKey())
		if errors.Is(err, offered.ErrNotFound) {
			err = nil
		}
	}
	return driftOf(srv, b, err, tools, nil), err
}

// driftOf is the drift of tools from b, the baseline of srv read with
// error err; digests are the tools' digests when known (a record's), nil
// to compute them. An unusable baseline withholds every tool; another
// error without a baseline (the store could not be locked, ...) compares
// with nothing approved.
func driftOf(srv *config.Server, b *offered.Baseline, err error, tools []mcpvalue.Tool, digests map[string]string) *Drift {
	d := &Drift{Server: srv.Name, OnChange: onChange(srv)}
	d.Changes = offered.CompareDigests(b, tools, digests)
	var ue *offered.UnusableError
	if errors.As(err, &ue) && ue.Approved {
		d.Unreadable = oneLine(ue.Error())
		for _, t := range tools {
			d.Withheld = append(d.Withheld, t.Name)
		}
		return d
	}
	if d.OnChange == config.OnChangeDeny {
		for _, c := range d.Changes {
			if c.Kind != offered.Removed {
				d.Withheld = append(d.Withheld, c.Tool)
			}
		}
	}
	return d
}

func onChange(srv *config.Server) string {
	if srv.Tools.OnChange == config.OnChangeDeny {
		return config.OnChangeDeny
	}
	return config.OnChangeWarn
}

// offer is the registry's hook after a listing of the live session sess
// was stored: it records the listing and recomputes the server's drift.
// It reports whether the registration must be rebuilt: the withheld tools
// changed, or a tool's definition did (a tools/list_changed that changes
// a description only still reaches the model).
func (s *server) offer(sess *session.Session) bool {
	o := &s.m.off
	if o.store == nil {
		return false
	}
	s.mu.Lock()
	tools := slices.Clone(s.tools)
	s.mu.Unlock()
	d, err := RecordOffered(o.store, s.cfg, sess, tools)
	if err != nil {
		s.log.Warn("cannot record what the server offered", "error", toolview.Redact(oneLine(err.Error())))
	}
	held := s.m.setDrift(s.cfg, d)
	digests := make(map[string]string, len(tools))
	for _, t := range tools {
		digests[t.Name], _ = offered.ToolDigest(t)
	}
	o.mu.Lock()
	prev, seen := o.digests[s.cfg.Name]
	o.digests[s.cfg.Name] = digests
	o.mu.Unlock()
	return held || (seen && !maps.Equal(prev, digests))
}

// driftFromCache applies drift to tools registered without a connection
// (lazy start from the store's record): the same comparison and
// withholding as a live listing, trusting them on first use as a listing
// would be, without writing the record. It reports whether the withheld
// tools changed (the caller rebuilds).
func (s *server) driftFromCache(tools []mcpvalue.Tool) bool {
	o := &s.m.off
	if o.store == nil {
		return false
	}
	d, err := CompareOffered(o.store, s.cfg, tools, true)
	if err != nil {
		s.log.Warn("cannot compare the cached tools with the approved ones", "error", toolview.Redact(oneLine(err.Error())))
	}
	return s.m.setDrift(s.cfg, d)
}

// setDrift makes d the server's drift, logs the changes not logged yet,
// and reports whether the withheld tools changed.
func (m *Manager) setDrift(srv *config.Server, d *Drift) bool {
	o := &m.off
	o.mu.Lock()
	prev := o.drift[srv.Name]
	if len(d.Changes) == 0 && d.Unreadable == "" {
		delete(o.drift, srv.Name)
	} else {
		o.drift[srv.Name] = d
	}
	var fresh []offered.Change
	for _, c := range d.Changes {
		key := srv.Name + "/" + c.Tool + "/" + string(c.Kind)
		if c.Current != nil {
			dg, _ := offered.ToolDigest(*c.Current)
			key += "/" + dg
		}
		if !o.warned[key] {
			o.warned[key] = true
			fresh = append(fresh, c)
		}
	}
	unreadable := d.Unreadable != "" && !o.warned[srv.Name+"/unreadable/"+d.Unreadable]
	if unreadable {
		o.warned[srv.Name+"/unreadable/"+d.Unreadable] = true
	}
	o.mu.Unlock()
	log := m.log.Named(srv.Name)
	if unreadable {
		log.Warn(termsafe.Escape(d.Unreadable))
	}
	for _, c := range fresh {
		what := "kept"
		if d.Unreadable != "" {
			what = "withheld from the model (its approval cannot be read)"
		} else if slices.Contains(d.Withheld, c.Tool) {
			what = "withheld from the model (tools.on_change: deny)"
		} else if c.Kind == offered.Removed {
			what = "gone"
		}
		log.Warn(fmt.Sprintf("tool %s changed since it was approved: %s; %s; review it with 'hermes mcp configure %s'",
			termsafe.Escape(c.Tool), termsafe.Escape(c.Summary()), what, srv.Name))
	}
	var before []string
	if prev != nil {
		before = prev.Withheld
	}
	return !slices.Equal(before, d.Withheld)
}

// withheld reports whether tool of server is withheld for drift.
func (m *Manager) withheld(server, tool string) bool {
	o := &m.off
	o.mu.Lock()
	defer o.mu.Unlock()
	d := o.drift[server]
	return d != nil && slices.Contains(d.Withheld, tool)
}

// driftError is the refusal of a call to a withheld tool, nil when the
// tool is not withheld.
func (m *Manager) driftError(server, tool string) error {
	o := &m.off
	o.mu.Lock()
	d := o.drift[server]
	var c *offered.Change
	if d != nil && slices.Contains(d.Withheld, tool) {
		for i := range d.Changes {
			if d.Changes[i].Tool == tool {
				c = &d.Changes[i]
			}
		}
	}
	o.mu.Unlock()
	if c == nil {
		return nil
	}
	name := toolview.ToolName(server, tool)
	what := "changed since it was approved (" + termsafe.Escape(c.Summary()) + ")"
	if c.Kind == offered.Added {
		what = "is new since the server's tools were approved"
	}
	return &CallError{Server: server, Tool: tool, Code: failure.CodeDrift,
		Msg: fmt.Sprintf("tool %s is withheld: it %s; run 'hermes mcp configure %s' to review and accept it", name, what, server)}
}

// Drift returns the servers whose tools differ from the approved ones, in
// config order: what changed, and which tools are withheld.
func (m *Manager) Drift() []Drift {
	m.mu.Lock()
	servers := append([]*server(nil), m.order...)
	m.mu.Unlock()
	o := &m.off
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []Drift
	for _, s := range servers {
		if d := o.drift[s.cfg.Name]; d != nil {
			c := *d
			c.Changes = slices.Clone(d.Changes)
			c.Withheld = slices.Clone(d.Withheld)
			out = append(out, c)
		}
	}
	return out
}

// AcceptDrift approves the current definitions of tools of server (their
// MCP names, as Drift reports them; all of its changed, added and removed
// tools when none are named): they become its approved definitions, kept
// in the store for every later session, and withheld ones are offered to
// the model again at once.
func (m *Manager) AcceptDrift(server string, tools ...string) error {
	s := m.server(server)
	if s == nil {
		return fmt.Errorf("registry: accept changes of %q: no such server", server)
	}
	o := &m.off
	if o.store == nil {
		return fmt.Errorf("registry: accept changes of %q: no home to keep approvals in", server)
	}
	s.mu.Lock()
	listing, listed := slices.Clone(s.tools), s.listed
	s.mu.Unlock()
	if !listed {
		return fmt.Errorf("accept changes of '%s': its tools were not listed yet; connect it first", server)
	}
	if len(tools) == 0 {
		o.mu.Lock()
		if d := o.drift[server]; d != nil {
			for _, c := range d.Changes {
				tools = append(tools, c.Tool)
			}
		}
		o.mu.Unlock()
		if len(tools) == 0 {
			return nil
		}
	}
	if _, err := o.store.Approve(s.cfg.StateKey(), listing, tools, "accepted"); err != nil {
		return fmt.Errorf("accept changes of '%s': %w", server, err)
	}
	d, err := CompareOffered(o.store, s.cfg, listing, false)
	if err != nil {
		return fmt.Errorf("accept changes of '%s': %w", server, err)
	}
	if m.setDrift(s.cfg, d) {
		m.rebuild()
	}
	return nil
}
