package gateway

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/hermes-agent/hermes/host/gateway/policy"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/toolview"
)

// This file is what the gateway serves beside tools, without the MCP
// engine (gateway.go turns it into MCP): every server's resources,
// resource templates and prompts, as each person sees them, routed back
// to their server.
//
// Names: a prompt is served as <server>_<prompt> (the server's name as
// configured, the prompt's as the server gave it), so two servers' prompts
// never collide; a resource keeps its URI and a template its URI template,
// as the server gave them, and a read is routed back to the server that
// listed the URI (the first in order when two list it; the other is
// logged once), or else to the server whose template matches it with the
// most literal characters (the first in order on a tie). The order is the
// shared servers' config order, then the per-person servers'.

// Upstream is one registry as the gateway serves it beside tools: each
// server's lists, a read, a get and a completion (*registry.Manager).
type Upstream interface {
	ServerResources(ctx context.Context, server string) ([]mcpvalue.Resource, error)
	ServerResourceTemplates(ctx context.Context, server string) ([]mcpvalue.ResourceTemplate, error)
	ServerPrompts(ctx context.Context, server string) ([]mcpvalue.Prompt, error)
	ReadResource(ctx context.Context, server, uri string) ([]mcpvalue.ResourceContents, error)
	GetPrompt(ctx context.Context, server, prompt string, args map[string]string) (*mcpvalue.PromptResult, error)
	Complete(ctx context.Context, server string, req mcpvalue.CompletionRequest) (mcpvalue.Completion, error)
	OnChange(fn func(registry.Change))
}

// Source is where one server's resources and prompts come from for a
// person.
type Source struct {
	Server   string
	Upstream Upstream
	// Shared: the registry is the same for everyone (the shared servers',
	// or the template of the per-person servers for a person who has not
	// called them yet), so its listings are kept until it tells of a
	// change; a person's own registry is asked each time.
	Shared bool
}

// Catalog is the part of a Backend that serves resources, prompts and
// completions (Registries is one). A Backend that is not a Catalog serves
// tools alone.
type Catalog interface {
	// Sources are every server for p, in order, each with the registry
	// that lists it for p; nothing is started for p. done releases the
	// person's registry, if one was used.
	Sources(p Person) (sources []Source, done func())
	// Open is the registry that serves server's reads, gets and
	// completions for p (a per-person server's is started on p's first
	// use); done releases it.
	Open(ctx context.Context, p Person, server string) (up Upstream, done func(), err error)
}

// ServedPrompt is a prompt as the gateway serves it: under Name
// (<server>_<prompt>), with its definition as its server listed it.
type ServedPrompt struct {
	Name, Server string
	Def          mcpvalue.Prompt
}

// ServedResource is a resource as the gateway serves it: its URI as its
// server gave it.
type ServedResource struct {
	Server string
	Def    mcpvalue.Resource
}

// ServedTemplate is a resource template as the gateway serves it.
type ServedTemplate struct {
	Server string
	Def    mcpvalue.ResourceTemplate
}

// PromptName is the name the gateway serves prompt of server under.
func PromptName(server, prompt string) string { return server + "_" + prompt }

// catalog keeps the shared registries' listings and assembles each
// person's view of them.
type catalog struct {
	backend Catalog
	log     hclog.Logger
	// changed is told which lists changed for everyone (the gateway
	// sends list_changed).
	changed func(registry.Lists)

	mu      sync.Mutex
	lists   map[listKey]*listing
	watched map[Upstream]bool
	warned  map[string]bool
}

type listKey struct {
	up     Upstream
	server string
}

// listing is what one shared registry listed for one server; fill
// serializes its listings.
type listing struct {
	fill      sync.Mutex
	mu        sync.Mutex
	has       registry.Lists
	resources []mcpvalue.Resource
	templates []mcpvalue.ResourceTemplate
	prompts   []mcpvalue.Prompt
}

func newCatalog(b Catalog, log hclog.Logger, changed func(registry.Lists)) *catalog {
	return &catalog{backend: b, log: log, changed: changed, lists: map[listKey]*listing{},
		watched: map[Upstream]bool{}, warned: map[string]bool{}}
}

// watch subscribes to the changes of the shared registries not watched
// yet (a reload may bring a new one), and forgets the listings of servers
// that are gone, telling of what that changed.
func (c *catalog) watch() {
	sources, done := c.backend.Sources(Person{})
	done()
	live := map[listKey]bool{}
	var subscribe []Upstream
	c.mu.Lock()
	for _, s := range sources {
		if !s.Shared {
			continue
		}
		live[listKey{s.Upstream, s.Server}] = true
		if !c.watched[s.Upstream] {
			c.watched[s.Upstream] = true
			subscribe = append(subscribe, s.Upstream)
		}
	}
	var gone registry.Lists
	for k, l := range c.lists {
		if !live[k] {
			delete(c.lists, k)
			gone |= l.nonEmpty()
		}
	}
	c.mu.Unlock()
	for _, up := range subscribe {
		up.OnChange(func(ch registry.Change) { c.onChange(up, ch) })
	}
	if gone != 0 {
		c.changed(gone)
	}
}

// nonEmpty are the lists l holds something in.
func (l *listing) nonEmpty() registry.Lists {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out registry.Lists
	if len(l.resources)+len(l.templates) > 0 {
		out |= registry.ChangedResources
	}
	if len(l.prompts) > 0 {
		out |= registry.ChangedPrompts
	}
	return out
}

// onChange passes on a change of the registered tools (the gateway
// refreshes its own), lists again what a server of up says may have
// changed, and tells of what did. It runs on the registry's goroutine: the work is
// done on one of its own.
func (c *catalog) onChange(up Upstream, ch registry.Change) {
	if ch.Lists&registry.ChangedTools != 0 {
		c.changed(registry.ChangedTools)
	}
	what := ch.Lists & (registry.ChangedResources | registry.ChangedPrompts)
	if ch.Server == "" || what == 0 {
		return
	}
	go func() {
		l := c.listing(up, ch.Server)
		l.fill.Lock()
		defer l.fill.Unlock()
		ctx := context.Background()
		var changed registry.Lists
		if what&registry.ChangedResources != 0 {
			r, rerr := up.ServerResources(ctx, ch.Server)
			t, terr := up.ServerResourceTemplates(ctx, ch.Server)
			if rerr == nil && terr == nil {
				l.mu.Lock()
				if !reflect.DeepEqual(r, l.resources) || !reflect.DeepEqual(t, l.templates) {
					changed |= registry.ChangedResources
				}
				l.resources, l.templates, l.has = r, t, l.has|registry.ChangedResources
				l.mu.Unlock()
			}
		}
		if what&registry.ChangedPrompts != 0 {
			if p, err := up.ServerPrompts(ctx, ch.Server); err == nil {
				l.mu.Lock()
				if !reflect.DeepEqual(p, l.prompts) {
					changed |= registry.ChangedPrompts
				}
				l.prompts, l.has = p, l.has|registry.ChangedPrompts
				l.mu.Unlock()
			}
		}
		if changed != 0 {
			c.changed(changed)
		}
	}()
}

// listing is the kept listing of server in up, made empty on first use.
func (c *catalog) listing(up Upstream, server string) *listing {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := listKey{up, server}
	l := c.lists[k]
	if l == nil {
		l = &listing{}
		c.lists[k] = l
	}
	return l
}

// list returns what src lists of what (resources and templates, or
// prompts): kept for a shared source, asked for each time for a person's.
func (c *catalog) list(ctx context.Context, src Source, what registry.Lists) ([]mcpvalue.Resource, []mcpvalue.ResourceTemplate, []mcpvalue.Prompt, error) {
	fetch := func() (r []mcpvalue.Resource, t []mcpvalue.ResourceTemplate, p []mcpvalue.Prompt, err error) {
		if what == registry.ChangedPrompts {
			p, err = src.Upstream.ServerPrompts(ctx, src.Server)
			return nil, nil, p, err
		}
		if r, err = src.Upstream.ServerResources(ctx, src.Server); err != nil {
			return nil, nil, nil, err
		}
		t, err = src.Upstream.ServerResourceTemplates(ctx, src.Server)
		return r, t, nil, err
	}
	if !src.Shared {
		return fetch()
	}
	l := c.listing(src.Upstream, src.Server)
	l.mu.Lock()
	if l.has&what != 0 {
		defer l.mu.Unlock()
		return l.resources, l.templates, l.prompts, nil
	}
	l.mu.Unlock()
	l.fill.Lock()
	defer l.fill.Unlock()
	l.mu.Lock()
	if l.has&what != 0 {
		defer l.mu.Unlock()
		return l.resources, l.templates, l.prompts, nil
	}
	l.mu.Unlock()
	r, t, p, err := fetch()
	if err != nil {
		return nil, nil, nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if what == registry.ChangedPrompts {
		l.prompts = p
	} else {
		l.resources, l.templates = r, t
	}
	l.has |= what
	return l.resources, l.templates, l.prompts, nil
}

// warnOnce logs w the first time it occurs.
func (c *catalog) warnOnce(w string, args ...any) {
	c.mu.Lock()
	seen := c.warned[w]
	c.warned[w] = true
	c.mu.Unlock()
	if !seen {
		c.log.Warn(w, args...)
	}
}

// each lists what of every source of p, in order, skipping a server
// whose listing fails (logged).
func (c *catalog) each(ctx context.Context, p Person, what registry.Lists, fn func(src Source, r []mcpvalue.Resource, t []mcpvalue.ResourceTemplate, pr []mcpvalue.Prompt)) {
	sources, done := c.backend.Sources(p)
	defer done()
	for _, src := range sources {
		r, t, pr, err := c.list(ctx, src, what)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			c.log.Warn("a server's listing is left out", "server", src.Server, "error", toolview.Redact(err.Error()))
			continue
		}
		fn(src, r, t, pr)
	}
}

// Resources are every resource p's sources list, each URI once: the first
// source that lists it serves it.
func (c *catalog) Resources(ctx context.Context, p Person) []ServedResource {
	var out []ServedResource
	by := map[string]string{}
	c.each(ctx, p, registry.ChangedResources, func(src Source, rs []mcpvalue.Resource, _ []mcpvalue.ResourceTemplate, _ []mcpvalue.Prompt) {
		for _, r := range rs {
			if first, dup := by[r.URI]; dup {
				if first != src.Server {
					c.warnOnce(fmt.Sprintf("resource %q is listed by servers '%s' and '%s'; the gateway serves the first's", r.URI, first, src.Server))
				}
				continue
			}
			by[r.URI] = src.Server
			out = append(out, ServedResource{Server: src.Server, Def: r})
		}
	})
	return out
}

// Templates are every resource template p's sources list, each template
// once: the first source that lists it serves it.
func (c *catalog) Templates(ctx context.Context, p Person) []ServedTemplate {
	var out []ServedTemplate
	seen := map[string]bool{}
	c.each(ctx, p, registry.ChangedResources, func(src Source, _ []mcpvalue.Resource, ts []mcpvalue.ResourceTemplate, _ []mcpvalue.Prompt) {
		for _, t := range ts {
			if seen[t.URITemplate] {
				continue
			}
			seen[t.URITemplate] = true
			out = append(out, ServedTemplate{Server: src.Server, Def: t})
		}
	})
	return out
}

// Prompts are every prompt p's sources list, under their served names;
// when two servers' prompts come to the same name the first is served
// (the other is logged once).
func (c *catalog) Prompts(ctx context.Context, p Person) []ServedPrompt {
	var out []ServedPrompt
	by := map[string]string{}
	c.each(ctx, p, registry.ChangedPrompts, func(src Source, _ []mcpvalue.Resource, _ []mcpvalue.ResourceTemplate, ps []mcpvalue.Prompt) {
		for _, pr := range ps {
			name := PromptName(src.Server, pr.Name)
			if first, dup := by[name]; dup {
				if first != src.Server {
					c.warnOnce(fmt.Sprintf("prompt name %q comes from servers '%s' and '%s'; the gateway serves the first's", name, first, src.Server))
				}
				continue
			}
			by[name] = src.Server
			out = append(out, ServedPrompt{Name: name, Server: src.Server, Def: pr})
		}
	})
	return out
}

// Prompt is p's prompt of served name.
func (c *catalog) Prompt(ctx context.Context, p Person, name string) (ServedPrompt, bool) {
	for _, pr := range c.Prompts(ctx, p) {
		if pr.Name == name {
			return pr, true
		}
	}
	return ServedPrompt{}, false
}

// Route is the server that serves uri for p: the one that lists it, else
// the one whose template matches it best; ok is false when none does.
func (c *catalog) Route(ctx context.Context, p Person, uri string) (server string, ok bool) {
	for _, r := range c.Resources(ctx, p) {
		if r.Def.URI == uri {
			return r.Server, true
		}
	}
	best := -1
	for _, t := range c.Templates(ctx, p) {
		if t.Def.URITemplate == uri {
			return t.Server, true
		}
		if n, ok := templateMatch(t.Def.URITemplate, uri); ok && n > best {
			server, best = t.Server, n
		}
	}
	return server, best >= 0
}

// templateMatch reports whether uri can be an expansion of the URI
// template tmpl (RFC 6570), judged by its literal parts alone: uri starts
// with the first, ends with the last and holds the others in order
// between. n is how many literal characters matched.
func templateMatch(tmpl, uri string) (n int, ok bool) {
	var lits []string
	rest := tmpl
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			lits = append(lits, rest)
			break
		}
		lits = append(lits, rest[:i])
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return 0, false
		}
		rest = rest[i+j+1:]
	}
	if len(lits) == 1 {
		return len(tmpl), tmpl == uri
	}
	first, last := lits[0], lits[len(lits)-1]
	if !strings.HasPrefix(uri, first) || len(uri) < len(first)+len(last) || !strings.HasSuffix(uri[len(first):], last) {
		return 0, false
	}
	mid := uri[len(first) : len(uri)-len(last)]
	n = len(first) + len(last)
	for _, l := range lits[1 : len(lits)-1] {
		i := strings.Index(mid, l)
		if i < 0 {
			return 0, false
		}
		mid = mid[i+len(l):]
		n += len(l)
	}
	return n, true
}

// Registered are the prompts every person may be served (the shared
// sources'), for the MCP engine's table of prompt names, sorted.
func (c *catalog) Registered(ctx context.Context) []ServedPrompt {
	sources, done := c.backend.Sources(Person{})
	done()
	byName := map[string]ServedPrompt{}
	for _, src := range sources {
		_, _, ps, err := c.list(ctx, src, registry.ChangedPrompts)
		if err != nil {
			continue
		}
		for _, pr := range ps {
			name := PromptName(src.Server, pr.Name)
			if _, dup := byName[name]; !dup {
				byName[name] = ServedPrompt{Name: name, Server: src.Server, Def: pr}
			}
		}
	}
	out := make([]ServedPrompt, 0, len(byName))
	for _, k := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[k])
	}
	return out
}

// The policy's questions about what the catalog serves.

func promptRequest(p Person, pr ServedPrompt) policy.Request {
	r := personRequest(p)
	r.Kind, r.Server, r.Name, r.Annotations = policy.KindPrompt, pr.Server, pr.Name, policy.ReadHints
	return r
}

func resourceRequest(p Person, server, uri string) policy.Request {
	r := personRequest(p)
	r.Kind, r.Server, r.Name, r.Annotations = policy.KindResource, server, uri, policy.ReadHints
	return r
}

func personRequest(p Person) policy.Request {
	return policy.Request{Subject: p.Subject, Groups: p.Groups, Scopes: p.Scopes, Claims: p.Claims}
}

// visiblePrompts keeps the prompts pol lets p see.
func visiblePrompts(pol *policy.Policy, p Person, ps []ServedPrompt) []ServedPrompt {
	return policy.Filter(pol, personRequest(p), ps, func(pr ServedPrompt) policy.Target {
		return policy.Target{Kind: policy.KindPrompt, Server: pr.Server, Name: pr.Name, Annotations: policy.ReadHints}
	})
}

// visibleResources keeps the resources pol lets p see.
func visibleResources(pol *policy.Policy, p Person, rs []ServedResource) []ServedResource {
	return policy.Filter(pol, personRequest(p), rs, func(r ServedResource) policy.Target {
		return policy.Target{Kind: policy.KindResource, Server: r.Server, Name: r.Def.URI, Annotations: policy.ReadHints}
	})
}

// visibleTemplates keeps the templates pol lets p see, judged by their
// text.
func visibleTemplates(pol *policy.Policy, p Person, ts []ServedTemplate) []ServedTemplate {
	return policy.Filter(pol, personRequest(p), ts, func(t ServedTemplate) policy.Target {
		return policy.Target{Kind: policy.KindResource, Server: t.Server, Name: t.Def.URITemplate, Annotations: policy.ReadHints}
	})
}

// logLine is line as a client is told it: control characters replaced by
// spaces, cut at maxToldBytes.
func logLine(line string) string {
	line = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, line)
	if len(line) > maxToldBytes {
		cut := maxToldBytes
		for cut > 0 && line[cut]&0xC0 == 0x80 {
			cut--
		}
		line = line[:cut] + "…"
	}
	return line
}
