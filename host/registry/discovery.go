package registry

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/toolview"
)

// listTools lists every tool of the session (ListTools: pagination up to
// MaxListPages, within the server's listing bound, tools with schemas
// nested past MaxSchemaDepth skipped with a warning).
func (s *server) listTools(sess *session.Session) ([]mcpvalue.Tool, error) {
	l, err := ListTools(s.ctx, sess, s.cfg)
	if err != nil {
		return nil, err
	}
	for _, w := range l.Skipped {
		s.m.warnOnce(w)
	}
	for _, n := range l.Notes {
		s.log.Warn(n)
	}
	return l.Tools, nil
}

// storeTools keeps a new listing (caller holds listMu), converting each
// tool once and scanning new or changed descriptions of allowed tools. A
// tool without a name and every repeat of a name are dropped from the
// listing first (toolview.UniqueTools), with one warning each, so the model
// is never offered two functions with one name. It returns the original
// names added and removed since the previous listing.
func (s *server) storeTools(tools []mcpvalue.Tool, caps mcpvalue.Capabilities) (added, removed []string) {
	tools, skipped := toolview.UniqueTools(s.cfg.Name, tools)
	for _, w := range skipped {
		s.m.warnOnce(w)
	}
	defs := &toolDefs{server: s.cfg.Name, tools: tools}
	s.mu.Lock()
	old := s.tools
	hadList := s.listed
	s.tools, s.defs, s.caps, s.listed = tools, defs, caps, true
	var warn [][2]string
	for _, t := range tools {
		if !s.filter.Allows(t.Name) {
			continue
		}
		if prev, ok := s.descSeen[t.Name]; ok && prev == t.Description {
			continue
		}
		s.descSeen[t.Name] = t.Description
		if f := toolview.ScanDescription(t.Description); len(f) > 0 {
			warn = append(warn, [2]string{t.Name, strings.Join(f, "; ")})
		}
	}
	s.mu.Unlock()
	for _, w := range warn {
		s.log.Warn("tool description looks like prompt injection (tool kept)", "tool", w[0], "findings", w[1])
	}
	if !hadList {
		return nil, nil
	}
	oldSet := make(map[string]bool, len(old))
	for _, t := range old {
		oldSet[t.Name] = true
	}
	newSet := make(map[string]bool, len(tools))
	for _, t := range tools {
		newSet[t.Name] = true
		if !oldSet[t.Name] {
			added = append(added, t.Name)
		}
	}
	for _, t := range old {
		if !newSet[t.Name] {
			removed = append(removed, t.Name)
		}
	}
	return added, removed
}

// view is what registration needs from a server, taken under its lock.
type view struct {
	name      string
	live      bool // tools are registered (connected, or reconnecting after a drop)
	listed    bool
	tools     []mcpvalue.Tool
	defs      *toolDefs
	caps      mcpvalue.Capabilities
	filter    toolview.Filter
	resources bool
	prompts   bool
}

func (s *server) view() view {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := s.listed && (s.state == StateConnected || s.state == StateIdle || (s.state == StateConnecting && (s.connected || s.lz.fromRecord)))
	return view{
		name: s.cfg.Name, live: live, listed: s.listed, tools: s.tools, defs: s.defs, caps: s.caps,
		filter: s.filter, resources: s.cfg.Tools.Resources, prompts: s.cfg.Tools.Prompts,
	}
}

// toolDefs are the tools of one listing of a server as the model sees
// them (toolview.ConvertTool), converted when first asked for: a listing
// that prints names (hermes tools) never converts a schema.
type toolDefs struct {
	server string
	tools  []mcpvalue.Tool
	once   sync.Once
	made   atomic.Bool // defs are set
	defs   []toolview.ToolDef
}

// get returns the converted tools, in the order of the listing.
func (t *toolDefs) get() []toolview.ToolDef {
	t.once.Do(func() {
		t.defs = make([]toolview.ToolDef, len(t.tools))
		for i, tl := range t.tools {
			t.defs[i] = toolview.ConvertTool(t.server, tl)
		}
		t.made.Store(true)
	})
	return t.defs
}

// one returns the i-th tool converted: from get's conversion when it was
// made, else converting that tool alone (not kept).
func (t *toolDefs) one(i int) toolview.ToolDef {
	if t.made.Load() {
		return t.defs[i]
	}
	return toolview.ConvertTool(t.server, t.tools[i])
}

// snapshot is one consistent picture of the registered tools.
type snapshot struct {
	// names are the registered names, in order.
	names  []string
	byName map[string]int // index into names, recs and the definitions
	// recs are, beside names, where a call of each goes: one lookup of
	// byName finds the tool's server and annotations.
	recs []callRecord
	// srcs are where each registered tool's definition comes from: a
	// server's listing (converted on first use), or a utility tool.
	srcs []defSource
	// defs are the definitions of names, made on the first call of all
	// (defsMade is set then).
	defsOnce sync.Once
	defsMade atomic.Bool
	defs     []toolview.ToolDef
	// filtered maps the names of tools a filter removed to their server.
	filtered map[string]string
	// withdrawn maps the names of tools of servers that are down (parked or
	// failed after a drop) to where they lead.
	withdrawn map[string]toolview.ToolRef
	// perServer lists each server's registered names in order.
	perServer map[string][]string
	// held maps the names of tools withheld for drift (tools.on_change:
	// deny) to where they lead.
	held map[string]toolview.ToolRef
}

// callRecord is where a call of a registered name goes: its server, and
// the tool's annotations as the server lists it now; utility: it is one
// of the server's utility tools.
type callRecord struct {
	srv     *server
	ann     mcpvalue.Annotations
	utility bool
}

// defSource is where a registered tool's definition comes from: tool i of
// a listing's defs, or util (a utility tool) when defs is nil. (util is
// a pointer: most entries are a listing's, and the registration's table
// holds one per tool.)
type defSource struct {
	defs *toolDefs
	i    int
	util *toolview.ToolDef
}

// all returns the definitions of every registered tool, in order.
func (snap *snapshot) all() []toolview.ToolDef {
	snap.defsOnce.Do(func() {
		snap.defs = make([]toolview.ToolDef, len(snap.srcs))
		for i, src := range snap.srcs {
			if src.defs == nil {
				snap.defs[i] = *src.util
			} else {
				snap.defs[i] = src.defs.get()[src.i]
			}
		}
		snap.defsMade.Store(true)
	})
	return snap.defs
}

// def returns the definition of the i-th registered tool: all's when it
// was made, else that tool's alone, so that looking up one tool (a
// one-shot call) does not convert every tool of every server.
func (snap *snapshot) def(i int) toolview.ToolDef {
	if snap.defsMade.Load() {
		return snap.defs[i]
	}
	src := snap.srcs[i]
	if src.defs == nil {
		return *src.util
	}
	return src.defs.one(src.i)
}

// rebuild recomputes the registered tools from every server's current
// listing, in config order, so collisions always resolve the same way:
// built-in names first, then earlier servers. Unchanged tools keep their
// definitions; readers never see a half-built table.
func (m *Manager) rebuild() {
	m.rebuildMu.Lock()
	defer m.rebuildMu.Unlock()
	m.mu.Lock()
	servers := append([]*server(nil), m.order...)
	m.mu.Unlock()

	// The tables are made at the size of every listing at once: ten
	// cached servers are registered in one rebuild (Manager.prepare).
	views := make([]view, len(servers))
	n := 0
	for i, s := range servers {
		views[i] = s.view()
		n += len(views[i].tools) + utilityCount
	}
	table := toolview.NewNameTable(m.builtins...)
	table.Grow(n)
	snap := &snapshot{byName: make(map[string]int, n), names: make([]string, 0, n), recs: make([]callRecord, 0, n), srcs: make([]defSource, 0, n),
		filtered: map[string]string{}, withdrawn: map[string]toolview.ToolRef{}, perServer: make(map[string][]string, len(servers)), held: map[string]toolview.ToolRef{}}
	add := func(s *server, name string, src defSource, ann mcpvalue.Annotations) {
		snap.byName[name] = len(snap.names)
		snap.names = append(snap.names, name)
		snap.srcs = append(snap.srcs, src)
		snap.recs = append(snap.recs, callRecord{srv: s, ann: ann, utility: src.defs == nil})
		snap.perServer[s.cfg.Name] = append(snap.perServer[s.cfg.Name], name)
	}
	var down []view
	for i, s := range servers {
		v := views[i]
		if !v.listed {
			continue
		}
		if !v.live {
			down = append(down, v)
			continue
		}
		snap.perServer[v.name] = make([]string, 0, len(v.tools)+utilityCount)
		for i, t := range v.tools {
			if !v.filter.Allows(t.Name) {
				snap.filtered[toolview.ToolName(v.name, t.Name)] = v.name
				continue
			}
			if m.withheld(v.name, t.Name) {
				snap.held[toolview.ToolName(v.name, t.Name)] = toolview.ToolRef{Server: v.name, Tool: t.Name}
				continue
			}
			name, warning, ok := table.Register(v.name, t.Name)
			if !ok {
				m.warnOnce(warning)
				continue
			}
			add(s, name, defSource{defs: v.defs, i: i}, t.Annotations)
		}
		for _, u := range toolview.UtilityTools(v.name, v.caps.Resources != nil, v.caps.Prompts != nil, v.resources, v.prompts) {
			if warning, ok := table.RegisterName(u.Name, toolview.ToolRef{Server: v.name, Tool: u.OriginalName}); !ok {
				m.warnOnce(warning)
				continue
			}
			add(s, u.Name, defSource{i: -1, util: &u}, mcpvalue.Annotations{})
		}
	}
	for _, v := range down {
		for _, t := range v.tools {
			n := toolview.ToolName(v.name, t.Name)
			if _, taken := snap.byName[n]; !taken && v.filter.Allows(t.Name) && !m.withheld(v.name, t.Name) {
				snap.withdrawn[n] = toolview.ToolRef{Server: v.name, Tool: t.Name}
			}
		}
		for _, u := range toolview.UtilityTools(v.name, v.caps.Resources != nil, v.caps.Prompts != nil, v.resources, v.prompts) {
			if _, taken := snap.byName[u.Name]; !taken {
				snap.withdrawn[u.Name] = toolview.ToolRef{Server: v.name, Tool: u.OriginalName}
			}
		}
	}
	m.snap.Store(snap)
	m.changed(Change{Lists: ChangedTools})
}

// utilityCount is the most utility tools a server registers beside its
// own (toolview.UtilityTools: resources and prompts, two each).
const utilityCount = 4

// warnOnce logs a registration warning the first time it occurs.
func (m *Manager) warnOnce(w string) {
	m.mu.Lock()
	seen := m.warned[w]
	m.warned[w] = true
	m.mu.Unlock()
	if !seen {
		m.log.Warn(w)
	}
}
