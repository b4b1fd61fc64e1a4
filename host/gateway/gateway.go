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
	g.mcp = server.NewMCPServer("hermes-gateway", opts.Version,
		server.WithToolCapabilities(true),
		server.WithHooks(hooks),
		server.WithRecovery())
	g.http = server.NewStreamableHTTPServer(g.mcp,
		server.WithSessionIdManagerResolver(resolver{ids: opts.SessionIDs}),
		server.WithSessionIdleTTL(opts.SessionIdleTTL),
		server.WithStreamableHTTPLogger(slog.New(mcpLog{log: opts.Log.Named("mcp")})))
	g.mux = http.NewServeMux()
	g.SetPolicy(opts.Policy)
	g.SetLimits(opts.Limits)
	g.SetAuthenticate(opts.Authenticate)
	g.mux.Handle(opts.Path, g.bounded(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		_ = srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), params)
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
	end(res, err)
	switch {
	case err != nil && ctx.Err() != nil:
		g.audit(rec, audit.OutcomeCancelled, start)
		return nil, ctx.Err()
	case err != nil:
		g.audit(rec, audit.OutcomeError, start)
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
