package registry

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/toolview"
)

// Options configure a Manager.
type Options struct {
	// Servers in config order; order decides name collisions.
	Servers []*config.Server
	// Deps are the session dependencies (Home, Supervisor, handlers). The
	// Manager adds its own notification and close handlers and still
	// calls the ones given here.
	Deps session.Deps
	// Builtins are the names of the host's own tools; an MCP tool never
	// takes one of them.
	Builtins []string
	// Media receives images, audio and blobs from results; nil means the
	// cache folder of Deps.Home.
	Media *toolview.MediaCache
	// Timings shortens intervals for tests; zero fields are the defaults.
	Timings Timings
	// Snapshot is set by a command that lists or calls once and exits
	// (hermes tools, hermes mcp call): no notification streams are opened
	// (subscriptions/listen on 2026-07-28), since nothing would follow
	// them, and a failed connection is not retried, since nobody waits
	// for the retry.
	Snapshot bool
	// Requests gives each server its handlers of what it asks of the host
	// (sampling, elicitation, roots). Nil, or a nil handler in what it
	// returns, falls back to Deps' handler of that kind; a nil handler
	// there too declines (the capability is not offered).
	Requests func(srv *config.Server) Requests
	// Lazy is set by a long-lived process (hermes chat, hermes mcp serve
	// with tools): a server with a fresh record in Records registers its
	// tools from it and starts on its first call, and a server with no
	// call for its idle_timeout is stopped until the next (lazy.go).
	Lazy bool
	// Records reads the record of what a server offered last time, for
	// Lazy; nil: the store of what servers offered under Deps.Home
	// (RecordsFrom), or none without a home.
	Records RecordSource
}

// Manager is the live registry: it connects the configured servers, keeps
// each one connected (reconnect, park, keepalive, circuit breaker), follows
// their tool lists and routes model tool calls to them. All methods are
// safe for concurrent use; calls to one server run concurrently.
type Manager struct {
	deps     session.Deps
	log      hclog.Logger
	builtins []string
	media    *toolview.MediaCache
	timings  Timings
	snapshot bool
	requests func(srv *config.Server) Requests
	lazy     bool
	records  RecordSource

	mu     sync.Mutex
	order  []*server
	byName map[string]*server
	warned map[string]bool
	closed bool
	// detach makes sessions end by Detach instead of Close (see Detach).
	detach  atomic.Bool
	started bool

	rebuildMu sync.Mutex
	snap      atomic.Pointer[snapshot]

	// off is the store of what servers offered and their drift (offered.go).
	off offeredState
	// watch are the functions told of changes (served.go).
	watch watchers
	// call is the one call a command serves (ForCall, onecall.go); nil
	// for every other manager.
	call *oneCall
}

// New returns a Manager for the given servers; nothing connects before
// Start.
func New(opts Options) *Manager {
	log := opts.Deps.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	media := opts.Media
	if media == nil && opts.Deps.Home != "" {
		media = toolview.NewMediaCache(toolview.CacheDir(opts.Deps.Home))
	}
	m := &Manager{
		deps:     opts.Deps,
		log:      log.Named("mcp"),
		builtins: opts.Builtins,
		media:    media,
		timings:  opts.Timings.withDefaults(),
		snapshot: opts.Snapshot,
		requests: opts.Requests,
		lazy:     opts.Lazy,
		records:  opts.Records,
		byName:   map[string]*server{},
		warned:   map[string]bool{},
	}
	for _, c := range opts.Servers {
		if _, dup := m.byName[c.Name]; dup {
			continue
		}
		s := newServer(m, c)
		m.order = append(m.order, s)
		m.byName[c.Name] = s
	}
	m.snap.Store(&snapshot{byName: map[string]int{}})
	m.off.init(opts.Deps.Home, m.log)
	return m
}

// Start is the parallel discovery: every enabled server connects at once,
// each within its own connect_timeout (and lists its tools within
// ListBound), all within DiscoveryTimeout (and ctx). It returns when every
// server has a first outcome; servers still retrying keep doing so in the
// background. Failures are reported by Status, never as an error: one
// server never stops another.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return errors.New("registry: Start after Close")
	}
	if m.started {
		m.mu.Unlock()
		return errors.New("registry: Start called twice")
	}
	m.started = true
	servers := append([]*server(nil), m.order...)
	m.mu.Unlock()
	m.discover(ctx, servers)
	m.logSummary()
	return nil
}

// discover starts servers and waits for their first outcomes.
func (m *Manager) discover(ctx context.Context, servers []*server) {
	ctx, cancel := context.WithTimeout(ctx, m.timings.DiscoveryTimeout)
	defer cancel()
	plans := m.prepare(servers)
	for i, s := range servers {
		s.start(plans[i])
	}
	for _, s := range servers {
		// Each server's attempt is bounded by its connect_timeout inside
		// session.Connect, and its tools/list after it by ListBound.
		bound := s.cfg.ConnectTimeout
		if bound <= 0 {
			bound = config.DefaultConnectTimeout
		}
		bound += ListBound(s.cfg)
		select {
		case <-s.first:
			continue
		default:
		}
		t := time.NewTimer(bound + discoveryGrace)
		select {
		case <-s.first:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// startPlan is how discovery starts a server.
type startPlan int

const (
	// planOff: not enabled (or refused); nothing starts.
	planOff startPlan = iota
	// planWait: it connects, and discovery waits for its first outcome.
	planWait
	// planNoWait: its tools came from its record (lazy start), or it
	// starts in the background (prestart); discovery does not wait.
	planNoWait
)

// prepare applies each server's lazy plan (prepareLazy) before any loop
// starts, reading the records of several servers at once, then registers
// the tools of those that came from a record in one rebuild (not one per
// server). It returns each server's startPlan.
func (m *Manager) prepare(servers []*server) []startPlan {
	plans := make([]startPlan, len(servers))
	work := make(chan int, len(servers))
	for i, s := range servers {
		if s.state == StateConnecting {
			plans[i] = planWait
			work <- i
		}
	}
	close(work)
	var wg sync.WaitGroup
	for range min(len(work), runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if servers[i].prepareLazy() {
					plans[i] = planNoWait
				}
			}
		}()
	}
	wg.Wait()
	if slices.Contains(plans, planNoWait) {
		m.rebuild()
	}
	return plans
}

// discoveryGrace is how long discovery waits for a server past its
// connect_timeout and listing bound.
const discoveryGrace = 5 * time.Second

func (m *Manager) logSummary() {
	st := m.Status()
	tools, ok, failed := 0, 0, 0
	for _, s := range st {
		switch s.State {
		case StateConnected, StateIdle:
			ok++
			tools += len(s.Registered)
		case StateDisabled:
		default:
			failed++
		}
	}
	m.log.Info(fmt.Sprintf("MCP: registered %d tool(s) from %d server(s) (%d failed)", tools, ok, failed))
}

// Tools returns the tools the model sees, in config order of their servers.
func (m *Manager) Tools() []toolview.ToolDef {
	return append([]toolview.ToolDef(nil), m.snap.Load().all()...)
}

// ToolCount is how many tools the model sees: len(Tools()), without
// converting their definitions.
func (m *Manager) ToolCount() int { return len(m.snap.Load().names) }

// Tool returns the registered tool called name.
func (m *Manager) Tool(name string) (toolview.ToolDef, bool) {
	snap := m.snap.Load()
	i, ok := snap.byName[name]
	if !ok {
		return toolview.ToolDef{}, false
	}
	return snap.def(i), true
}

// ParallelSafe reports whether the registered tool name belongs to a server
// configured with supports_parallel_tool_calls.
func (m *Manager) ParallelSafe(name string) bool {
	d, ok := m.Tool(name)
	if !ok {
		return false
	}
	s := m.server(d.Server)
	return s != nil && s.cfg.SupportsParallelToolCalls
}

func (m *Manager) server(name string) *server {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byName[name]
}

func (m *Manager) serverNames(name string) []string {
	return m.snap.Load().perServer[name]
}

// ServerStatus is one configured server as Status reports it.
type ServerStatus struct {
	Name string
	// Transport is stdio, http, sse or a plugin transport's name.
	Transport string
	State     State
	// Registered are the model-visible names of its tools, utility tools
	// included, in order.
	Registered []string
	// Enabled counts its own tools that pass the filter and are registered;
	// Total counts the tools the server offers (0 until listed).
	Enabled, Total int
	// Toolset is "mcp-<server>" when at least one tool is registered.
	Toolset string
	// Error is why the server is not connected (one line, redacted).
	Error string
	// Code is the sdk error code of that failure when it had one (e.g.
	// sdk.CodeLoginNeeded: only 'hermes mcp login' helps; sdk.CodeAuth:
	// the server refused the request without credentials).
	Code string
	// Challenge is the WWW-Authenticate header of the server's 401 or 403
	// when that failure was one (it may name OAuth metadata).
	Challenge string
	// HTTPStatus is that failure's HTTP status (401, 403, ...), 0 when
	// it had none.
	HTTPStatus int
	// Refreshes counts tool-list refreshes after list_changed.
	Refreshes int64
	// Rejected is set when the security check (package screening) refused
	// the entry: State is StateFailed, Error the reason, and the server is
	// never started until its entry changes.
	Rejected bool
	// Lazy is the server's lazy start and idle stop (Options.Lazy).
	Lazy LazyStatus
}

// Status returns every configured server in config order.
func (m *Manager) Status() []ServerStatus {
	m.mu.Lock()
	servers := append([]*server(nil), m.order...)
	m.mu.Unlock()
	snap := m.snap.Load()
	out := make([]ServerStatus, 0, len(servers))
	for _, s := range servers {
		s.mu.Lock()
		st := ServerStatus{
			Name: s.cfg.Name, Transport: transportName(s.cfg), State: s.state, Error: s.err,
			Code: s.errCode, Challenge: s.challenge, HTTPStatus: s.httpStatus,
			Total: len(s.tools), Refreshes: s.refreshes.Load(), Rejected: s.rejected,
		}
		s.mu.Unlock()
		st.Lazy = s.lazyStatus()
		st.Registered = append([]string(nil), snap.perServer[s.cfg.Name]...)
		for _, n := range st.Registered {
			if !snap.recs[snap.byName[n]].utility {
				st.Enabled++
			}
		}
		if len(st.Registered) > 0 {
			st.Toolset = toolview.Toolset(s.cfg.Name)
		}
		out = append(out, st)
	}
	return out
}

// ServerTools returns every tool server name offered at its last successful
// tools/list, in the server's order and before its tools filter: the listing
// the registry registers from (pagination followed up to MaxListPages; a
// tool without a name and repeats of a name skipped with a warning).
// listed is false until a listing succeeded; a server without the tools
// capability is listed with no tools.
func (m *Manager) ServerTools(name string) (tools []mcpvalue.Tool, listed bool) {
	s := m.server(name)
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools), s.listed
}

// StateKey is the key of what hermes keeps about server name by name
// (config.Server.StateKey): allow-always grants go under it. An unknown
// name is its own key.
func (m *Manager) StateKey(name string) string {
	s := m.server(name)
	if s == nil {
		return name
	}
	return s.cfg.StateKey() // cfg is fixed for the server's life
}

func transportName(c *config.Server) string { return c.Launch().Transport }

// Reconnect asks a server to reconnect at once: a parked or failed server
// tries now, a connected one drops its session and connects afresh. It
// does not wait.
func (m *Manager) Reconnect(name string) error {
	s := m.server(name)
	if s == nil {
		return fmt.Errorf("registry: reconnect %q: no such server", name)
	}
	if c := s.current(); c != nil {
		c.requestReconnect()
	}
	s.kick()
	return nil
}

// ReloadResult says what a Reload changed.
type ReloadResult struct {
	Added, Removed, Reconnected []string
}

// Reload applies a new server list: removed servers are closed, added and
// changed ones connect (in parallel, like Start), and servers that are not
// connected are retried at once. Registration follows the new config
// order.
func (m *Manager) Reload(ctx context.Context, servers []*config.Server) (ReloadResult, error) {
	var res ReloadResult
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return res, errors.New("registry: Reload after Close")
	}
	wasStarted := m.started
	m.started = true
	old := m.byName
	var order []*server
	byName := map[string]*server{}
	var fresh, stale []*server
	for _, c := range servers {
		if _, dup := byName[c.Name]; dup {
			continue
		}
		prev := old[c.Name]
		switch {
		case prev == nil:
			s := newServer(m, c)
			fresh = append(fresh, s)
			res.Added = append(res.Added, c.Name)
			byName[c.Name] = s
		case !sameConfig(prev.cfg, c):
			s := newServer(m, c)
			fresh = append(fresh, s)
			stale = append(stale, prev)
			res.Reconnected = append(res.Reconnected, c.Name)
			byName[c.Name] = s
		default:
			byName[c.Name] = prev
		}
		order = append(order, byName[c.Name])
	}
	for name, s := range old {
		if byName[name] == nil {
			stale = append(stale, s)
			res.Removed = append(res.Removed, name)
		}
	}
	m.order, m.byName = order, byName
	m.mu.Unlock()
	if !wasStarted {
		// Servers kept from New never ran: they connect now.
		for _, s := range order {
			if !contains(fresh, s) {
				fresh = append(fresh, s)
			}
		}
	}

	stopAll(stale, m.timings.ShutdownWait)
	for _, s := range order {
		if byName[s.cfg.Name] == s && !contains(fresh, s) {
			s.mu.Lock()
			down := s.state == StateParked || s.state == StateFailed
			s.mu.Unlock()
			if down && s.cfg.Err == nil && s.cfg.Enabled && !s.rejected {
				s.kick()
				res.Reconnected = append(res.Reconnected, s.cfg.Name)
			}
		}
	}
	m.rebuild()
	m.discover(ctx, fresh)
	m.logSummary()
	return res, nil
}

func contains(list []*server, s *server) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sameConfig reports whether two entries of one server are the same.
func sameConfig(a, b *config.Server) bool {
	ac, bc := *a, *b
	ae, be := errText(ac.Err), errText(bc.Err)
	ac.Err, bc.Err = nil, nil
	return ae == be && reflect.DeepEqual(ac, bc)
}

func stopAll(servers []*server, wait time.Duration) {
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() { defer wg.Done(); s.stop(wait) }()
	}
	wg.Wait()
}

// Detach is Close for a one-shot command whose output is complete: every
// session is handed to its plugin to shut the server down gracefully on its
// own (stdin closed, SIGTERM, SIGKILL, within the plugin's graces), and
// Detach returns without waiting for that, so the user's prompt comes back
// at once. Nothing is left running after the graces, whatever exits first.
func (m *Manager) Detach() error {
	m.detach.Store(true)
	return m.Close()
}

// Close disconnects every server (in parallel, each within ShutdownWait)
// and withdraws all tools.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	servers := append([]*server(nil), m.order...)
	m.mu.Unlock()
	stopAll(servers, m.timings.ShutdownWait)
	m.snap.Store(&snapshot{byName: map[string]int{}})
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
