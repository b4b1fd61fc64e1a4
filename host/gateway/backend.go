package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/registry"
)

// registryTools are the tools of registry m as the gateway serves them:
// those the model would see, filters applied, under the same names, with
// their schemas as the servers listed them. The registry's own utility
// tools (resources and prompts as tools, for a model) are left out: the
// gateway serves resources and prompts as MCP does.
func registryTools(m *registry.Manager) []Tool {
	defs := m.Tools()
	listed := map[string]map[string]mcpvalue.Tool{}
	out := make([]Tool, 0, len(defs))
	for _, d := range defs {
		if d.Utility != "" {
			continue
		}
		byName, ok := listed[d.Server]
		if !ok {
			tools, _ := m.ServerTools(d.Server)
			byName = make(map[string]mcpvalue.Tool, len(tools))
			for _, t := range tools {
				byName[t.Name] = t
			}
			listed[d.Server] = byName
		}
		def, ok := byName[d.OriginalName]
		if !ok {
			continue
		}
		out = append(out, Tool{Name: d.Name, Server: d.Server, Def: def})
	}
	return out
}

// callRegistry calls the tool of model-visible name in m, resolved as the
// registry resolves a model's call.
func callRegistry(ctx context.Context, m *registry.Manager, name string, args json.RawMessage) (mcpvalue.CallResult, error) {
	rec, err := m.Resolve(name)
	if err != nil {
		return mcpvalue.CallResult{}, err
	}
	return m.CallTool(ctx, rec.Server, rec.Tool, args)
}

// Registries is the Backend of a gateway: one registry of the shared
// servers, and for the servers with `isolation: per_user` one registry per
// person, built on a person's first call and closed when they have not
// called for PersonIdle, so that each person's calls run in processes of
// their own.
type Registries struct {
	// Shared is the registry of the shared servers.
	Shared *registry.Manager
	// Template lists the per-person servers' tools without a person (a
	// listing from their records, or a start of their own): what the
	// gateway offers before anyone has called them. nil: none.
	Template *registry.Manager
	// PerUser names the per-person servers.
	PerUser []string
	// ForPerson builds and starts the registry of the per-person servers
	// for subject.
	ForPerson func(ctx context.Context, subject string) (*registry.Manager, error)
	// PersonIdle closes a person's registry they have not used for this
	// long (DefaultPersonIdle when 0); MaxPeople bounds how many are open
	// at once (DefaultMaxPeople when 0): past it the least recently used
	// idle one is closed first, and with every one busy a new person is
	// refused with an error naming gateway.max_people.
	PersonIdle time.Duration
	MaxPeople  int
	// Upstreams, when set, keeps each person's upstream credentials (the
	// servers with auth: oauth run per person with them).
	Upstreams *Upstreams

	mu     sync.Mutex
	people map[string]*personRegistry
	now    func() time.Time
}

// Defaults of Registries.
const (
	DefaultPersonIdle = 10 * time.Minute
	DefaultMaxPeople  = 1000
)

type personRegistry struct {
	m        *registry.Manager
	ready    chan struct{}
	err      error
	used     time.Time
	inFlight int
}

// Tools are the shared servers' tools and the per-person servers' tools
// as the template lists them.
func (r *Registries) Tools() []Tool {
	r.mu.Lock()
	shared, template := r.Shared, r.Template
	r.mu.Unlock()
	tools := registryTools(shared)
	if template != nil {
		tools = append(tools, registryTools(template)...)
	}
	return tools
}

// Call calls a shared server's tool in the shared registry and a
// per-person server's tool in the person's own.
func (r *Registries) Call(ctx context.Context, p Person, t Tool, args json.RawMessage) (mcpvalue.CallResult, error) {
	r.mu.Lock()
	shared, perUser := r.Shared, slices.Contains(r.PerUser, t.Server)
	r.mu.Unlock()
	if !perUser {
		return callRegistry(ctx, shared, t.Name, args)
	}
	if ups := r.Upstreams; ups != nil {
		if res, ok := ups.before(ctx, p, t); ok {
			return res, nil
		}
	}
	m, done, err := r.person(ctx, p.Subject)
	if err != nil {
		return mcpvalue.CallResult{}, err
	}
	defer done()
	res, err := callRegistry(ctx, m, t.Name, args)
	if ups := r.Upstreams; err != nil && ups != nil {
		if res, ok := ups.after(ctx, p, t, err); ok {
			return res, nil
		}
	}
	return res, err
}

// person is subject's registry, built on first use, and the release of
// this use.
func (r *Registries) person(ctx context.Context, subject string) (*registry.Manager, func(), error) {
	r.mu.Lock()
	if r.people == nil {
		r.people = map[string]*personRegistry{}
	}
	if r.now == nil {
		r.now = time.Now
	}
	pr := r.people[subject]
	if pr == nil {
		if err := r.makeRoom(); err != nil {
			r.mu.Unlock()
			return nil, nil, err
		}
		pr = &personRegistry{ready: make(chan struct{})}
		r.people[subject] = pr
		forPerson := r.ForPerson
		go func() {
			pr.m, pr.err = forPerson(context.WithoutCancel(ctx), subject)
			close(pr.ready)
		}()
	}
	pr.inFlight++
	pr.used = r.now()
	r.mu.Unlock()
	release := func() {
		r.mu.Lock()
		pr.inFlight--
		pr.used = r.now()
		r.mu.Unlock()
	}
	select {
	case <-pr.ready:
	case <-ctx.Done():
		release()
		return nil, nil, ctx.Err()
	}
	if pr.err != nil {
		release()
		r.forget(subject, pr)
		return nil, nil, pr.err
	}
	return pr.m, release, nil
}

// forget drops pr, a registry that failed to start, so the next call
// tries again.
func (r *Registries) forget(subject string, pr *personRegistry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.people[subject] == pr {
		delete(r.people, subject)
	}
}

// makeRoom closes the least recently used idle person's registry when
// MaxPeople are open; r.mu is held.
func (r *Registries) makeRoom() error {
	limit := r.MaxPeople
	if limit <= 0 {
		limit = DefaultMaxPeople
	}
	if len(r.people) < limit {
		return nil
	}
	var oldest string
	var at time.Time
	for s, pr := range r.people {
		if pr.inFlight == 0 && (oldest == "" || pr.used.Before(at)) {
			oldest, at = s, pr.used
		}
	}
	if oldest == "" {
		return fmt.Errorf("the gateway runs per-person servers for %d people at once, all busy; raise gateway.max_people or try again shortly", limit)
	}
	r.closePerson(oldest)
	return nil
}

// closePerson closes subject's registry in the background; r.mu is held.
func (r *Registries) closePerson(subject string) {
	pr := r.people[subject]
	delete(r.people, subject)
	ups := r.Upstreams
	go func() {
		<-pr.ready
		if pr.m != nil {
			_ = pr.m.Close()
			if ups != nil {
				ups.release(pr.m)
			}
		}
	}()
}

// Sweep closes the registries of people idle for PersonIdle; the gateway
// calls it periodically.
func (r *Registries) Sweep() {
	idle := r.PersonIdle
	if idle <= 0 {
		idle = DefaultPersonIdle
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.now == nil {
		r.now = time.Now
	}
	for s, pr := range r.people {
		if pr.inFlight == 0 && r.now().Sub(pr.used) >= idle {
			r.closePerson(s)
		}
	}
}

// People is how many people's registries are open.
func (r *Registries) People() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.people)
}

// Close closes every registry: the shared one, the template and each
// person's.
func (r *Registries) Close() {
	r.mu.Lock()
	for s := range r.people {
		r.closePerson(s)
	}
	r.mu.Unlock()
	_ = r.Shared.Close()
	if r.Template != nil {
		_ = r.Template.Close()
	}
}
