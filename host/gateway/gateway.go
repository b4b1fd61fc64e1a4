package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/hermes-agent/hermes/host/gateway/audit"
	"github.com/hermes-agent/hermes/host/gateway/identity"
	"github.com/hermes-agent/hermes/host/gateway/limits"
	"github.com/hermes-agent/hermes/host/gateway/policy"
	"github.com/hermes-agent/hermes/host/gateway/telemetry"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/registry"
)

// Person is who a request comes from, as the identity middleware found
// them.
type Person = identity.Principal

// Tool is one tool the gateway can serve: its model-visible name
// (mcp_<server>_<tool>), its server, and its definition as the server
// listed it (Def.Name is the MCP name on that server).
type Tool struct {
	Name   string
	Server string
	Def    mcpvalue.Tool
}

// Backend is what the gateway serves: the run's registries (Registries).
// A Backend that is also a Catalog serves resources, prompts and
// completions besides tools.
type Backend interface {
	// Tools are every tool that exists now.
	Tools() []Tool
	// Call calls tool t for person p with the client's argument bytes.
	Call(ctx context.Context, p Person, t Tool, args json.RawMessage) (mcpvalue.CallResult, error)
}

// Options configure a Gateway.
type Options struct {
	Backend Backend
	// Authenticate wraps the MCP endpoint: it answers a request without a
	// valid credential itself, and hands on the others with the person in
	// their context (identity.WithPrincipal; an identity.Authenticator's
	// Middleware).
	Authenticate func(http.Handler) http.Handler
	// Policy is the one decision: it filters every list a person sees and
	// gates every call they make.
	Policy *policy.Policy
	// Audit, when set, records every call and denial.
	Audit *audit.Log
	// Telemetry, when set, traces and measures every call.
	Telemetry *telemetry.Telemetry
	// Limits, when set, bound each person's calls (gateway.limits); a
	// rule's own limits bound each person's calls of each tool it allows.
	Limits *limits.Set
	// SessionIDs authenticate the session ids of the 2025-11-25 revision.
	SessionIDs *SessionIDs
	// Path is the MCP endpoint's path ("/mcp" when "").
	Path    string
	Version string
	Log     hclog.Logger
	// Ready reports whether the gateway can serve (for /readyz); nil:
	// always.
	Ready func() error
	// MaxRequestBytes bounds one request body (gateway.max_request_kb;
	// DefaultMaxRequestBytes when 0).
	MaxRequestBytes int64
	// SessionIdleTTL drops what this replica holds for a 2025-11-25
	// session no request touched for this long (DefaultSessionIdleTTL
	// when 0). The session id stays valid: its next request is served as
	// any replica serves a session it has not seen.
	SessionIdleTTL time.Duration
}

// DefaultSessionIdleTTL is Options.SessionIdleTTL's default. Without a
// bound, mcp-go would keep about 10 KB for every session initialized here
// until its client sent DELETE, which a self-contained id refuses
// (docs/BENCHMARKS.md, Gateway: a call through it).
const DefaultSessionIdleTTL = 10 * time.Minute

// DefaultMaxRequestBytes is the bound of a request body when the config
// sets none: 4 MiB.
const DefaultMaxRequestBytes = 4 << 20

// Gateway is one gateway's HTTP front.
type Gateway struct {
	opts Options
	mcp  *server.MCPServer
	http *server.StreamableHTTPServer
	mux  *http.ServeMux

	// refreshing serializes Refresh; mu guards tools, which the MCP
	// server's handlers read.
	refreshing sync.Mutex
	mu         sync.RWMutex
	tools      map[string]Tool
	// ruleLimits are the limit sets of the policy rules that have limits,
	// by rule index, made on first use.
	ruleMu     sync.Mutex
	ruleLimits map[int]*limits.Set
	// policy, limits and endpoint (the MCP handler behind identity) are
	// what a reload replaces; a request uses those it found.
	policy   atomic.Pointer[policy.Policy]
	limits   atomic.Pointer[limits.Set]
	endpoint atomic.Pointer[http.Handler]
	// draining: the gateway is stopping; /readyz says so, so the balancer
	// sends no new requests while the ones in flight finish.
	draining atomic.Bool

	// cat serves resources, prompts and completions (nil: the backend is
	// not a Catalog). The MCP engine's tables of prompt names and resource
	// URIs are up to date when registered equals changes (a change counts
	// one more); regMu serializes filling them. refreshPending coalesces
	// the refreshes changes ask for.
	cat            *catalog
	regMu          sync.Mutex
	changes        atomic.Int64
	registered     atomic.Int64
	regPrompts     []string
	regResources   []string
	refreshPending atomic.Bool
	// listening are the GET streams open here (relay.go).
	listening listening
}

// New builds the gateway and registers the backend's tools.
func New(opts Options) (*Gateway, error) {
	switch {
	case opts.Backend == nil:
		return nil, errors.New("gateway: no backend")
	case opts.Authenticate == nil:
		return nil, errors.New("gateway: no identity: every request must be authenticated")
	case opts.Policy == nil:
		return nil, errors.New("gateway: no policy")
	case opts.SessionIDs == nil:
		return nil, errors.New("gateway: no session key")
	}
	if opts.Path == "" {
		opts.Path = "/mcp"
	}
	if opts.Log == nil {
		opts.Log = hclog.NewNullLogger()
	}
	if opts.SessionIdleTTL <= 0 {
		opts.SessionIdleTTL = DefaultSessionIdleTTL
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	g := &Gateway{opts: opts}
	// Lists are filtered after they are made, not by mcp-go's tool filter:
	// that filter also answers a call of a filtered tool itself, and a
	// denied call must reach the gateway to be audited.
	hooks := &server.Hooks{}
	hooks.AddAfterListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		res.Tools = g.filter(ctx, res.Tools)
	})
	// A listing first takes up what changed in the registry since (a
	// server started, reloaded or told of new tools).
	hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) { g.Refresh() })
	serverOpts := []server.ServerOption{server.WithToolCapabilities(true), server.WithHooks(hooks), server.WithRecovery(),
		server.WithLogging()}
	if cat, ok := opts.Backend.(Catalog); ok {
		g.cat = newCatalog(cat, opts.Log.Named("catalog"), g.listsChanged)
		g.changes.Store(1) // nothing registered yet
		serverOpts = append(serverOpts, g.serveCatalog(hooks)...)
	}
	g.mcp = server.NewMCPServer("hermes-gateway", opts.Version, serverOpts...)
	g.http = server.NewStreamableHTTPServer(g.mcp,
		server.WithSessionIdManagerResolver(resolver{ids: opts.SessionIDs}),
		server.WithSessionIdleTTL(opts.SessionIdleTTL),
		server.WithStreamableHTTPLogger(slog.New(mcpLog{log: opts.Log.Named("mcp")})))
	g.mux = http.NewServeMux()
	g.SetPolicy(opts.Policy)
	g.SetLimits(opts.Limits)
	g.SetAuthenticate(opts.Authenticate)
	g.mux.Handle(opts.Path, g.bounded(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w, r = countFlushes(w, r)
		(*g.endpoint.Load()).ServeHTTP(w, r)
	})))
	g.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	g.mux.HandleFunc("GET /readyz", g.readyz)
	g.Refresh()
	return g, nil
}

// SetPolicy makes p the decision of every request from now on (a reload).
func (g *Gateway) SetPolicy(p *policy.Policy) { g.policy.Store(p) }

// SetLimits makes l the limits per person from now on (nil: none). The
// calls in flight keep the places they took in the old set.
func (g *Gateway) SetLimits(l *limits.Set) { g.limits.Store(l) }

// SetAuthenticate puts the identity middleware mw in front of the MCP
// endpoint from now on (a reload with other issuers or tokens).
func (g *Gateway) SetAuthenticate(mw func(http.Handler) http.Handler) {
	h := mw(g.streams(g.http))
	g.endpoint.Store(&h)
}

// Handler is the gateway's HTTP handler: the MCP endpoint, /healthz and
// /readyz.
func (g *Gateway) Handler() http.Handler { return g.mux }

// Handle adds another endpoint (the protected resource metadata,
// /metrics, the OAuth callback) beside the MCP endpoint.
func (g *Gateway) Handle(pattern string, h http.Handler) { g.mux.Handle(pattern, h) }

// bounded refuses a request body over the bound, naming the key that
// raises it.
func (g *Gateway) bounded(next http.Handler) http.Handler {
	limit := g.opts.MaxRequestBytes
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			http.Error(w, fmt.Sprintf("request body of %d bytes is over the gateway's limit of %d bytes (gateway.max_request_kb in config.yaml)", r.ContentLength, limit),
				http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

func (g *Gateway) readyz(w http.ResponseWriter, _ *http.Request) {
	if g.draining.Load() {
		http.Error(w, "not ready: stopping", http.StatusServiceUnavailable)
		return
	}
	if g.opts.Ready != nil {
		if err := g.opts.Ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	_, _ = w.Write([]byte("ready\n"))
}

// Refresh registers the backend's tools as they are now, when they
// changed since the last time (a server started, reloaded or told of new
// tools); the MCP server tells the clients that listen.
func (g *Gateway) Refresh() {
	if g.cat != nil {
		g.cat.watch()
	}
	tools := g.opts.Backend.Tools()
	byName := make(map[string]Tool, len(tools))
	for _, t := range tools {
		byName[t.Name] = t
	}
	g.refreshing.Lock()
	defer g.refreshing.Unlock()
	g.mu.RLock()
	same := g.tools != nil && sameTools(g.tools, byName)
	g.mu.RUnlock()
	if same {
		return
	}
	g.mu.Lock()
	g.tools = byName
	g.mu.Unlock()
	served := make([]server.ServerTool, 0, len(tools))
	for _, t := range tools {
		served = append(served, server.ServerTool{Tool: mcpTool(t), Handler: g.call})
	}
	g.mcp.SetTools(served...)
}

// sameTools reports whether two registrations list the same tools with
// the same definitions.
func sameTools(a, b map[string]Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for name, t := range a {
		u, ok := b[name]
		if !ok || t.Server != u.Server || !sameDef(t.Def, u.Def) {
			return false
		}
	}
	return true
}

func sameDef(a, b mcpvalue.Tool) bool {
	return a.Name == b.Name && a.Title == b.Title && a.Description == b.Description &&
		bytes.Equal(a.InputSchema, b.InputSchema) && bytes.Equal(a.OutputSchema, b.OutputSchema) &&
		reflect.DeepEqual(a.Annotations, b.Annotations)
}

// mcpTool is t as the gateway lists it: under its model-visible name, with
// its schemas and hints as its server gave them.
func mcpTool(t Tool) mcp.Tool {
	schema := t.Def.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	mt := mcp.NewToolWithRawSchema(t.Name, t.Def.Description, schema)
	mt.Title = t.Def.Title
	if len(t.Def.OutputSchema) > 0 {
		mt.RawOutputSchema = t.Def.OutputSchema
	}
	a := t.Def.Annotations
	mt.Annotations = mcp.ToolAnnotation{Title: a.Title, ReadOnlyHint: a.ReadOnly, DestructiveHint: a.Destructive,
		IdempotentHint: a.Idempotent, OpenWorldHint: a.OpenWorld}
	return mt
}

// personOf is the person the identity middleware put in ctx.
func personOf(ctx context.Context) (Person, bool) {
	p, ok := identity.FromContext(ctx)
	if !ok || p == nil {
		return Person{}, false
	}
	return *p, true
}

// tool is the tool of model-visible name, if it exists.
func (g *Gateway) tool(name string) (Tool, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	t, ok := g.tools[name]
	return t, ok
}

// filter keeps, of a tools/list answer, what the request's person may
// call: the same decision that gates the call.
func (g *Gateway) filter(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	p, ok := personOf(ctx)
	if !ok {
		return nil
	}
	out := tools[:0:0]
	for _, mt := range tools {
		if t, ok := g.tool(mt.Name); ok && g.policy.Load().Allowed(request(p, t)) {
			out = append(out, mt)
		}
	}
	return out
}

// request is what the policy is asked about p calling t.
func request(p Person, t Tool) policy.Request {
	return policy.Request{Subject: p.Subject, Groups: p.Groups, Scopes: p.Scopes, Claims: p.Claims,
		Server: t.Server, Tool: t.Name, Annotations: policy.HintsOf(t.Def.Annotations)}
}

// ruleSet is the limit set of policy rule i with lim, made on first use.
func (g *Gateway) ruleSet(i int, lim policy.Limits) *limits.Set {
	if lim.CallsPerMinute <= 0 && lim.Concurrent <= 0 {
		return nil
	}
	g.ruleMu.Lock()
	defer g.ruleMu.Unlock()
	if g.ruleLimits == nil {
		g.ruleLimits = map[int]*limits.Set{}
	}
	s := g.ruleLimits[i]
	if s == nil {
		s = limits.New(limits.Limits{CallsPerMinute: lim.CallsPerMinute, Concurrent: lim.Concurrent},
			fmt.Sprintf("gateway.policy[%d].limits", i), 0)
		g.ruleLimits[i] = s
	}
	return s
}

// call gates one tools/call by the decision and the limits, then calls
// the backend with the client's argument bytes as they came.
func (g *Gateway) call(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	start := time.Now()
	p, ok := personOf(ctx)
	t, exists := g.tool(req.Params.Name)
	if !ok || !exists {
		return nil, fmt.Errorf("unknown tool %q", req.Params.Name)
	}
	args, err := json.Marshal(req.Params.Arguments)
	if err != nil {
		return nil, fmt.Errorf("tool %q: arguments: %w", t.Name, err)
	}
	if tel := g.opts.Telemetry; tel != nil {
		var end func(telemetry.Outcome)
		ctx, end = tel.Start(ctx, telemetry.Request{Method: "tools/call", Tool: t.Name, Server: t.Server, Subject: p.Subject,
			Protocol: req.Header.Get("Mcp-Protocol-Version"), SessionID: req.Header.Get("Mcp-Session-Id"), Meta: metaMap(req.Params.Meta)})
		var res *mcp.CallToolResult
		defer func() { end(telemetry.Outcome{ToolError: res != nil && res.IsError, Err: err}) }()
		res, err = g.gated(ctx, start, p, t, args, req.Params.Meta)
		return res, err
	}
	return g.gated(ctx, start, p, t, args, req.Params.Meta)
}

// metaMap is a request's _meta as a map (the trace context is read from
// it); nil when there is none.
func metaMap(m *mcp.Meta) map[string]any {
	if m == nil {
		return nil
	}
	return m.AdditionalFields
}

// withProgress relays the upstream server's progress on the call to the
// client under the client's own progress token, when it gave one.
func withProgress(ctx context.Context, meta *mcp.Meta) context.Context {
	if meta == nil || meta.ProgressToken == nil {
		return ctx
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return ctx
	}
	token := meta.ProgressToken
	return registry.WithProgress(ctx, func(p registry.Progress) {
		params := map[string]any{"progressToken": token, "progress": p.Progress}
		if p.Total > 0 {
			params["total"] = p.Total
		}
		if p.Message != "" {
			params["message"] = p.Message
		}
		if srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), params) == nil {
			flushesOf(ctx).queue()
		}
	})
}

// gated decides, limits, calls and audits one call of t by p.
func (g *Gateway) gated(ctx context.Context, start time.Time, p Person, t Tool, args json.RawMessage, meta *mcp.Meta) (*mcp.CallToolResult, error) {
	d := g.policy.Load().Decide(request(p, t))
	rec := audit.Record{Time: start, Subject: p.Subject, Client: p.ClientID, Server: t.Server, Tool: t.Name,
		Allow: d.Allow, Rule: d.Rule, Reason: d.Reason, Arguments: args}
	if !d.Allow {
		g.audit(rec, audit.OutcomeDenied, start)
		// A tool the person may not call does not exist for them: the
		// same answer as a name nobody serves.
		return nil, fmt.Errorf("unknown tool %q", t.Name)
	}
	release, err := g.limits.Load().Acquire(p.Subject)
	if err == nil {
		var releaseRule func()
		if releaseRule, err = g.ruleSet(d.Rule, d.Limits).Acquire(p.Subject + "\x00" + t.Name); err == nil {
			defer releaseRule()
		} else {
			release()
		}
	}
	if err != nil {
		// A tool error the model can act on: which limit, when to retry.
		g.audit(rec, audit.OutcomeLimited, start)
		return mcp.NewToolResultError(err.Error()), nil
	}
	defer release()
	uctx, end := g.upstream(ctx, p, t, meta)
	res, err := g.opts.Backend.Call(uctx, p, t, args)
	// The progress relayed goes out before the result (flushwait.go).
	flushesOf(ctx).written(ctx)
	end(res, err)
	switch {
	case err != nil && ctx.Err() != nil:
		g.audit(rec, audit.OutcomeCancelled, start)
		return nil, ctx.Err()
	case err != nil:
		g.audit(rec, audit.OutcomeError, start)
		g.tell(ctx, mcp.LoggingLevelError, fmt.Sprintf("tools/call %q failed: %s", t.Name, err))
		return mcp.NewToolResultError(err.Error()), nil
	case res.IsError:
		g.audit(rec, audit.OutcomeToolError, start)
	default:
		g.audit(rec, audit.OutcomeOK, start)
	}
	return callResult(res)
}

func (g *Gateway) audit(rec audit.Record, outcome audit.Outcome, start time.Time) {
	if g.opts.Audit == nil {
		return
	}
	rec.Outcome, rec.Duration = outcome, time.Since(start)
	if err := g.opts.Audit.Write(rec); err != nil {
		g.opts.Log.Error("audit record not written", "error", err)
	}
}

// callResult is res in mcp-go's type, by its MCP encoding: content blocks,
// structured content and _meta pass as the server wrote them.
func callResult(res mcpvalue.CallResult) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("encode the tool's result: %w", err)
	}
	raw := json.RawMessage(b)
	return mcp.ParseCallToolResult(&raw)
}

// Path is the MCP endpoint's path.
func (g *Gateway) Path() string { return g.opts.Path }

// resolver gives mcp-go, per request, a SessionIdManager bound to the
// request's person.
type resolver struct {
	ids *SessionIDs
}

func (r resolver) ResolveSessionIdManager(req *http.Request) server.SessionIdManager {
	b := boundIDs{ids: r.ids}
	if req != nil {
		if p, ok := personOf(req.Context()); ok {
			b.subject, b.known = p.Subject, true
		}
	}
	return b
}

// boundIDs is the SessionIdManager of one request: ids are issued to, and
// accepted only for, that request's person.
type boundIDs struct {
	ids     *SessionIDs
	subject string
	known   bool
}

func (b boundIDs) Generate() string { return b.ids.Issue(b.subject) }

func (b boundIDs) Validate(id string) (bool, error) {
	if !b.known {
		return false, errSessionID
	}
	return false, b.ids.Check(id, b.subject)
}

// Terminate: a self-contained id cannot be revoked on every replica, so
// a client's DELETE is refused (the revision allows 405 for that); the
// id ends with its maximum age, and the person's access with their token.
func (b boundIDs) Terminate(string) (bool, error) { return true, nil }

// serveCatalog is what serving the catalog adds to the MCP server: the
// capabilities (list_changed for resources and prompts, no resource
// subscriptions, completions), each person's lists made in the list
// hooks, and the engine's tables of prompt names and resource URIs (it
// answers an unknown one itself) filled before a get or a read.
func (g *Gateway) serveCatalog(hooks *server.Hooks) []server.ServerOption {
	hooks.AddAfterListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		res.Resources, res.NextCursor = []mcp.Resource{}, ""
		if p, ok := personOf(ctx); ok {
			for _, r := range visibleResources(g.policy.Load(), p, g.cat.Resources(ctx, p)) {
				res.Resources = append(res.Resources, mcpResource(r))
			}
		}
	})
	hooks.AddAfterListResourceTemplates(func(ctx context.Context, _ any, _ *mcp.ListResourceTemplatesRequest, res *mcp.ListResourceTemplatesResult) {
		res.ResourceTemplates, res.NextCursor = []mcp.ResourceTemplate{}, ""
		if p, ok := personOf(ctx); ok {
			for _, t := range visibleTemplates(g.policy.Load(), p, g.cat.Templates(ctx, p)) {
				if mt, err := mcpTemplate(t); err == nil {
					res.ResourceTemplates = append(res.ResourceTemplates, mt)
				}
			}
		}
	})
	hooks.AddAfterListPrompts(func(ctx context.Context, _ any, _ *mcp.ListPromptsRequest, res *mcp.ListPromptsResult) {
		res.Prompts, res.NextCursor = []mcp.Prompt{}, ""
		if p, ok := personOf(ctx); ok {
			for _, pr := range visiblePrompts(g.policy.Load(), p, g.cat.Prompts(ctx, p)) {
				res.Prompts = append(res.Prompts, mcpPrompt(pr))
			}
		}
	})
	hooks.AddBeforeGetPrompt(func(ctx context.Context, _ any, _ *mcp.GetPromptRequest) { g.register(ctx) })
	hooks.AddBeforeReadResource(func(ctx context.Context, _ any, _ *mcp.ReadResourceRequest) { g.register(ctx) })
	return []server.ServerOption{server.WithResourceCapabilities(false, true), server.WithPromptCapabilities(true),
		server.WithCompletions(), server.WithPromptCompletionProvider(completer{g}), server.WithResourceCompletionProvider(completer{g})}
}

// listsChanged tells the clients that listen what changed: tools by a
// refresh (which tells when they did), prompts by registering them again,
// resources by a notification.
func (g *Gateway) listsChanged(l registry.Lists) {
	if l&registry.ChangedTools != 0 && g.refreshPending.CompareAndSwap(false, true) {
		go func() {
			g.refreshPending.Store(false)
			g.Refresh()
		}()
	}
	if l&(registry.ChangedResources|registry.ChangedPrompts) == 0 {
		return
	}
	g.changes.Add(1)
	go func() {
		prompts, _ := g.register(context.Background())
		if l&registry.ChangedPrompts != 0 && !prompts {
			g.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationPromptsListChanged), nil)
		}
		if l&registry.ChangedResources != 0 {
			g.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationResourcesListChanged), nil)
		}
	}()
}

// register fills the MCP engine's tables with the prompt names and the
// resource URIs and templates of the shared sources, when they changed
// since; the engine tells the clients that listen of a new prompt table.
func (g *Gateway) register(ctx context.Context) (prompts, resources bool) {
	if g.registered.Load() == g.changes.Load() {
		return false, false
	}
	g.regMu.Lock()
	defer g.regMu.Unlock()
	gen := g.changes.Load()
	if g.registered.Load() == gen {
		return false, false
	}
	defer g.registered.Store(gen)
	ps := g.cat.Registered(ctx)
	names := make([]string, len(ps))
	served := make([]server.ServerPrompt, len(ps))
	for i, pr := range ps {
		names[i] = pr.Name
		served[i] = server.ServerPrompt{Prompt: mcpPrompt(pr), Handler: g.getPrompt}
	}
	if !slices.Equal(names, g.regPrompts) {
		g.regPrompts, prompts = names, true
		g.mcp.SetPrompts(served...)
	}
	rs, ts := g.cat.Resources(ctx, Person{}), g.cat.Templates(ctx, Person{})
	var keys []string
	var sr []server.ServerResource
	for _, r := range rs {
		keys = append(keys, r.Def.URI)
		sr = append(sr, server.ServerResource{Resource: mcpResource(r), Handler: g.readResource})
	}
	var st []server.ServerResourceTemplate
	for _, t := range ts {
		if mt, err := mcpTemplate(t); err == nil {
			keys = append(keys, "\x00"+t.Def.URITemplate)
			st = append(st, server.ServerResourceTemplate{Template: mt, Handler: server.ResourceTemplateHandlerFunc(g.readResource)})
		}
	}
	if !slices.Equal(keys, g.regResources) {
		g.regResources, resources = keys, true
		g.mcp.SetResources(sr...)
		g.mcp.SetResourceTemplates(st...)
	}
	return prompts, resources
}

// readResource reads a resource for the request's person from the server
// that serves its URI to them, gated, limited and audited as a call is.
func (g *Gateway) readResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	start := time.Now()
	uri := req.Params.URI
	p, ok := personOf(ctx)
	srv, found := "", false
	if ok {
		srv, found = g.cat.Route(ctx, p, uri)
	}
	if !found {
		return nil, fmt.Errorf("resource %q: %w", uri, server.ErrResourceNotFound)
	}
	var contents []mcpvalue.ResourceContents
	err := g.admitted(ctx, start, p, resourceRequest(p, srv, uri), "resources/read", nil, func(ctx context.Context, up Upstream) (err error) {
		contents, err = up.ReadResource(ctx, srv, uri)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]mcp.ResourceContents, 0, len(contents))
	for _, c := range contents {
		b, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("resource %q: encode its contents: %w", uri, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("resource %q: encode its contents: %w", uri, err)
		}
		rc, err := mcp.ParseResourceContents(m)
		if err != nil {
			return nil, fmt.Errorf("resource %q: its contents: %w", uri, err)
		}
		out = append(out, rc)
	}
	return out, nil
}

// getPrompt gets a prompt for the request's person from its server, gated,
// limited and audited as a call is.
func (g *Gateway) getPrompt(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	start := time.Now()
	name := req.Params.Name
	p, ok := personOf(ctx)
	var pr ServedPrompt
	if ok {
		pr, ok = g.cat.Prompt(ctx, p, name)
	}
	if !ok {
		return nil, fmt.Errorf("prompt %q: %w", name, server.ErrPromptNotFound)
	}
	args, _ := json.Marshal(req.Params.Arguments)
	var res *mcpvalue.PromptResult
	err := g.admitted(ctx, start, p, promptRequest(p, pr), "prompts/get", args, func(ctx context.Context, up Upstream) (err error) {
		res, err = up.GetPrompt(ctx, pr.Server, pr.Def.Name, req.Params.Arguments)
		return err
	})
	if err != nil {
		return nil, err
	}
	return promptResult(res)
}

// admitted decides, limits, runs and audits one read or get (method) of p
// on the upstream that serves it; a refusal is the same error as a name
// nobody serves.
func (g *Gateway) admitted(ctx context.Context, start time.Time, p Person, req policy.Request, method string, args json.RawMessage, run func(context.Context, Upstream) error) error {
	d := g.policy.Load().Decide(req)
	rec := audit.Record{Time: start, Subject: p.Subject, Client: p.ClientID, Server: req.Server, Method: method, Tool: req.Name,
		Allow: d.Allow, Rule: d.Rule, Reason: d.Reason, Arguments: args}
	if !d.Allow {
		g.audit(rec, audit.OutcomeDenied, start)
		if req.Kind == policy.KindPrompt {
			return fmt.Errorf("prompt %q: %w", req.Name, server.ErrPromptNotFound)
		}
		return fmt.Errorf("resource %q: %w", req.Name, server.ErrResourceNotFound)
	}
	release, err := g.limits.Load().Acquire(p.Subject)
	if err == nil {
		var releaseRule func()
		if releaseRule, err = g.ruleSet(d.Rule, d.Limits).Acquire(p.Subject + "\x00" + req.Name); err == nil {
			defer releaseRule()
		} else {
			release()
		}
	}
	if err != nil {
		g.audit(rec, audit.OutcomeLimited, start)
		return err
	}
	defer release()
	up, done, err := g.cat.backend.Open(ctx, p, req.Server)
	if err == nil {
		err = run(ctx, up)
		done()
	}
	switch {
	case err != nil && ctx.Err() != nil:
		g.audit(rec, audit.OutcomeCancelled, start)
		return ctx.Err()
	case err != nil:
		g.audit(rec, audit.OutcomeError, start)
		g.tell(ctx, mcp.LoggingLevelError, fmt.Sprintf("%s %q failed: %s", method, req.Name, err))
		return err
	}
	g.audit(rec, audit.OutcomeOK, start)
	return nil
}

// maxToldBytes bounds one log line the gateway sends a client.
const maxToldBytes = 1024

// tell sends the request's client a log line of the gateway's own
// (logger hermes-gateway) at level, when its session asked for that level
// (logging/setLevel; on 2026-07-28 the request's own level): the line is
// cut at maxToldBytes and its control characters replaced, and the MCP
// engine JSON-escapes it.
func (g *Gateway) tell(ctx context.Context, level mcp.LoggingLevel, line string) {
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return
	}
	_ = srv.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(level, "hermes-gateway", logLine(line)))
}

// completer answers completion/complete: a prompt's argument from the
// prompt's server, a resource template's from the template's, for a
// person who may see the prompt or the template (else no values).
type completer struct{ g *Gateway }

func (c completer) CompletePromptArgument(ctx context.Context, name string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	p, ok := personOf(ctx)
	if !ok {
		return &mcp.Completion{Values: []string{}}, nil
	}
	pr, ok := c.g.cat.Prompt(ctx, p, name)
	if !ok || !c.g.policy.Load().Allowed(promptRequest(p, pr)) {
		return nil, fmt.Errorf("prompt %q: %w", name, server.ErrPromptNotFound)
	}
	return c.g.complete(ctx, p, pr.Server, mcpvalue.CompletionRequest{Ref: mcpvalue.CompletionRef{Type: mcpvalue.RefPrompt, Name: pr.Def.Name},
		Argument: arg.Name, Value: arg.Value, Context: cc.Arguments})
}

func (c completer) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	p, ok := personOf(ctx)
	if !ok {
		return &mcp.Completion{Values: []string{}}, nil
	}
	srv, found := c.g.cat.Route(ctx, p, uri)
	if !found || !c.g.policy.Load().Allowed(resourceRequest(p, srv, uri)) {
		return nil, fmt.Errorf("resource %q: %w", uri, server.ErrResourceNotFound)
	}
	return c.g.complete(ctx, p, srv, mcpvalue.CompletionRequest{Ref: mcpvalue.CompletionRef{Type: mcpvalue.RefResource, URI: uri},
		Argument: arg.Name, Value: arg.Value, Context: cc.Arguments})
}

// complete asks server for completions for p.
func (g *Gateway) complete(ctx context.Context, p Person, srv string, req mcpvalue.CompletionRequest) (*mcp.Completion, error) {
	up, done, err := g.cat.backend.Open(ctx, p, srv)
	if err != nil {
		return nil, err
	}
	defer done()
	c, err := up.Complete(ctx, srv, req)
	if err != nil {
		return nil, err
	}
	if c.Values == nil {
		c.Values = []string{}
	}
	return &mcp.Completion{Values: c.Values, Total: c.Total, HasMore: c.HasMore}, nil
}

// mcpResource is r as the gateway lists it.
func mcpResource(r ServedResource) mcp.Resource {
	return mcp.Resource{URI: r.Def.URI, Name: r.Def.Name, Description: r.Def.Description, MIMEType: r.Def.MIMEType}
}

// mcpTemplate is t as the gateway lists it; a template the engine cannot
// parse is an error (and left out).
func mcpTemplate(t ServedTemplate) (mcp.ResourceTemplate, error) {
	var ut mcp.URITemplate
	q, _ := json.Marshal(t.Def.URITemplate)
	if err := json.Unmarshal(q, &ut); err != nil {
		return mcp.ResourceTemplate{}, fmt.Errorf("resource template %q of '%s': %w", t.Def.URITemplate, t.Server, err)
	}
	return mcp.ResourceTemplate{URITemplate: &ut, Name: t.Def.Name, Description: t.Def.Description, MIMEType: t.Def.MIMEType}, nil
}

// mcpPrompt is pr as the gateway lists it: under its served name.
func mcpPrompt(pr ServedPrompt) mcp.Prompt {
	out := mcp.Prompt{Name: pr.Name, Description: pr.Def.Description}
	for _, a := range pr.Def.Arguments {
		out.Arguments = append(out.Arguments, mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
	}
	return out
}

// promptResult is res in mcp-go's type, by its MCP encoding: each
// message's content block as the server wrote it.
func promptResult(res *mcpvalue.PromptResult) (*mcp.GetPromptResult, error) {
	type message struct {
		Role    string           `json:"role"`
		Content mcpvalue.Content `json:"content"`
	}
	w := struct {
		Description string    `json:"description,omitempty"`
		Messages    []message `json:"messages"`
	}{Messages: []message{}}
	if res != nil {
		w.Description = res.Description
		for _, m := range res.Messages {
			w.Messages = append(w.Messages, message{Role: m.Role, Content: m.Content})
		}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encode the prompt: %w", err)
	}
	raw := json.RawMessage(b)
	return mcp.ParseGetPromptResult(&raw)
}
