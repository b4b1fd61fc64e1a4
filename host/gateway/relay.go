package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/hermes-agent/hermes/host/gateway/telemetry"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/session"
)

// This file carries a call through the gateway to its upstream with what
// belongs to the caller: the upstream's sampling and elicitation requests
// relayed to the client that made the call, the trace context of the
// gateway's upstream span in the call's _meta, and (gateway.go) its
// progress under the client's own token. Cancellation needs nothing here:
// the call's context ends when the client sends notifications/cancelled or
// its request closes, and the registry's call then cancels upstream.
//
// Relay rules (docs/GATEWAY.md, Sampling and elicitation):
//   - a request goes only to the client that made the call it is tied to
//     (host/session's relay.go ties it, and declines what it cannot tie);
//   - the client must have declared the capability (sampling, sampling with
//     tools when the request has tools, elicitation in the request's mode)
//     in its session's initialize on this replica;
//   - a sampling request needs the session's GET stream open on this
//     replica (mcp-go sends server-initiated sampling only there), an
//     elicitation goes on the call's own stream;
//   - a 2026-07-28 client is asked within a call's result
//     (input_required), which the gateway does not pass on yet: declined.
//
// Every refusal is an error the upstream receives, naming what is missing.

// relayOwners numbers the owners of calls without a session (2026-07-28),
// each call its own.
var relayOwners atomic.Uint64

// listening counts, per 2025-11-25 session id, the GET streams open on
// this replica.
type listening struct {
	mu sync.Mutex
	n  map[string]int
	// opened is closed and replaced whenever a stream opens.
	opened chan struct{}
}

func (l *listening) open(id string) func() {
	l.mu.Lock()
	if l.n == nil {
		l.n = map[string]int{}
	}
	l.n[id]++
	if l.opened != nil {
		close(l.opened)
		l.opened = nil
	}
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.n[id]--; l.n[id] <= 0 {
			delete(l.n, id)
		}
	}
}

// wait reports whether session id has a GET stream open here, waiting up
// to grace (or the end of ctx) for one to open: a client opens it just
// after initialize, and its first call may come first.
func (l *listening) wait(ctx context.Context, id string, grace time.Duration) bool {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for {
		l.mu.Lock()
		if l.n[id] > 0 {
			l.mu.Unlock()
			return true
		}
		if l.opened == nil {
			l.opened = make(chan struct{})
		}
		opened := l.opened
		l.mu.Unlock()
		select {
		case <-opened:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// streamGrace is how long a sampling request waits for its client's GET
// stream to open on this replica.
const streamGrace = 2 * time.Second

// streams is the MCP handler behind identity: a GET stream is accepted
// only with a session id of the request's person (mcp-go does not check
// the id of a GET, and a stream of another person's session would receive
// their server-initiated requests), and is counted while it is open.
func (g *Gateway) streams(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(server.HeaderKeySessionID)
		if r.Method != http.MethodGet || id == "" {
			next.ServeHTTP(w, r)
			return
		}
		p, ok := personOf(r.Context())
		if !ok || g.opts.SessionIDs.Check(id, p.Subject) != nil {
			http.Error(w, "Invalid session ID", http.StatusNotFound)
			return
		}
		defer g.listening.open(id)()
		next.ServeHTTP(w, r)
	})
}

// upstream is ctx for the backend's call of t by p: the client's progress
// token, the relay of what the upstream asks during the call, and the
// trace context of the upstream span; end finishes that span.
func (g *Gateway) upstream(ctx context.Context, p Person, t Tool, meta *mcp.Meta) (uctx context.Context, end func(mcpvalue.CallResult, error)) {
	uctx = withProgress(ctx, meta)
	uctx = registry.WithRelay(uctx, g.relayOf(ctx, p))
	end = func(mcpvalue.CallResult, error) {}
	if tel := g.opts.Telemetry; tel != nil {
		var carrier map[string]string
		var finish func(telemetry.Outcome)
		uctx, carrier, finish = tel.StartUpstream(uctx, telemetry.Request{Method: "tools/call", Tool: t.Def.Name, Server: t.Server})
		end = func(res mcpvalue.CallResult, err error) {
			finish(telemetry.Outcome{ToolError: err == nil && res.IsError, Err: err})
		}
		return registry.WithMeta(uctx, traceMeta(carrier)), end
	}
	// Without telemetry the client's own trace context passes on as it
	// came, so that the upstream still continues the client's trace.
	if meta != nil {
		carrier := map[string]string{}
		for _, k := range []string{"traceparent", "tracestate"} {
			if v, ok := meta.AdditionalFields[k].(string); ok && len(v) <= maxTraceField {
				carrier[k] = v
			}
		}
		uctx = registry.WithMeta(uctx, traceMeta(carrier))
	}
	return uctx, end
}

// maxTraceField bounds a trace context field passed on as a client sent it
// (W3C allows 512 bytes of tracestate in 32 members).
const maxTraceField = 512

func traceMeta(carrier map[string]string) map[string]any {
	if len(carrier) == 0 {
		return nil
	}
	m := make(map[string]any, len(carrier))
	for k, v := range carrier {
		m[k] = v
	}
	return m
}

// relayOf is the relay of a call made with ctx (a tools/call handler's) by
// p: owned by p's session, or by the call alone when there is no session.
func (g *Gateway) relayOf(ctx context.Context, p Person) registry.Relay {
	cs := server.ClientSessionFromContext(ctx)
	r := &clientRelay{g: g, call: ctx}
	if cs != nil && cs.SessionID() != "" {
		r.session = cs.SessionID()
	}
	owner := p.Subject + "\x00" + r.session
	if r.session == "" {
		owner = p.Subject + "\x00call-" + strconv.FormatUint(relayOwners.Add(1), 10)
	}
	return registry.Relay{Owner: owner, Relay: r}
}

// clientRelay passes an upstream's request on to the client of one call.
type clientRelay struct {
	g *Gateway
	// call is the tools/call handler's context: mcp-go's session and the
	// call's own stream.
	call    context.Context
	session string
}

// RelayError is a request the gateway does not pass on to the client,
// naming why; the upstream receives it with JSON-RPC code -1, as every
// declined sampling request.
type RelayError struct{ Msg string }

func (e *RelayError) Error() string { return e.Msg }

// JSONRPCCode is the code the upstream receives.
func (e *RelayError) JSONRPCCode() int { return -1 }

func relayRefused(method, format string, args ...any) error {
	return &RelayError{Msg: method + " declined by the gateway: " + fmt.Sprintf(format, args...)}
}

func (r *clientRelay) Relay(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if r.session == "" {
		return nil, relayRefused(method, "the calling client speaks protocol revision 2026-07-28, whose clients are asked within the call's result (input_required), which the gateway does not pass on yet")
	}
	cs := server.ClientSessionFromContext(r.call)
	info, ok := cs.(server.SessionWithClientInfo)
	if !ok || info.GetClientInfo().Name == "" {
		return nil, relayRefused(method, "the calling client's session was not initialized on this replica (or went idle here), so what it declared is not known here")
	}
	caps := info.GetClientCapabilities()
	// The request's context: the call's (its session and stream), ended
	// as well when the upstream side gives up or its bound passes.
	rctx, cancel := context.WithCancel(r.call)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	switch method {
	case session.MethodSampling:
		if caps.Sampling == nil {
			return nil, relayRefused(method, "the calling client did not declare the sampling capability")
		}
		var req mcp.CreateMessageRequest
		if err := json.Unmarshal(params, &req.CreateMessageParams); err != nil {
			return nil, relayRefused(method, "its params do not decode: %v", err)
		}
		if (len(req.Tools) > 0 || req.ToolChoice != nil) && caps.Sampling.Tools == nil {
			return nil, relayRefused(method, "the request has tools and the calling client did not declare sampling with tools (capabilities.sampling.tools)")
		}
		if !r.g.listening.wait(rctx, r.session, streamGrace) {
			return nil, relayRefused(method, "the calling client has no GET stream open on this replica, the only stream a sampling request can reach it on")
		}
		req.Method = method
		res, err := r.g.mcp.RequestSampling(rctx, req)
		return answer(method, res, err, ctx)
	case session.MethodElicitation:
		if caps.Elicitation == nil {
			return nil, relayRefused(method, "the calling client did not declare the elicitation capability")
		}
		var req mcp.ElicitationRequest
		if err := json.Unmarshal(params, &req.Params); err != nil {
			return nil, relayRefused(method, "its params do not decode: %v", err)
		}
		if req.Params.Mode == mcp.ElicitationModeURL && caps.Elicitation.URL == nil {
			return nil, relayRefused(method, "the request is URL mode and the calling client did not declare it (capabilities.elicitation.url)")
		}
		if req.Params.Mode != mcp.ElicitationModeURL && caps.Elicitation.URL != nil && caps.Elicitation.Form == nil {
			return nil, relayRefused(method, "the request is form mode and the calling client declared URL mode only")
		}
		req.Method = method
		res, err := r.g.mcp.RequestElicitation(rctx, req)
		return answer(method, res, err, ctx)
	}
	return nil, relayRefused(method, "only sampling/createMessage and elicitation/create are passed on")
}

// answer is the client's answer to a relayed request as the upstream gets
// it: its result as JSON, or why there is none.
func answer(method string, res any, err error, upstream context.Context) (json.RawMessage, error) {
	if err != nil {
		if upstream.Err() != nil {
			return nil, upstream.Err()
		}
		return nil, fmt.Errorf("%s relayed to the calling client: %w", method, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("encode the calling client's answer to %s: %w", method, err)
	}
	return b, nil
}

// ElicitAccept is the action of an elicitation the person accepted.
const ElicitAccept = string(mcp.ElicitationResponseActionAccept)

// askToOpen asks the client of the tools/call that ctx belongs to to open
// link (a URL-mode elicitation with message and id), when its session
// declared elicitation.url and the revision lets the gateway send it a
// request; it returns the person's action ("accept", "decline",
// "cancel"), and ok false when it could not ask.
func askToOpen(ctx context.Context, link, message, id string, log hclog.Logger) (action string, ok bool) {
	srv, sess := server.ServerFromContext(ctx), server.ClientSessionFromContext(ctx)
	if srv == nil || sess == nil {
		return "", false
	}
	info, ok := sess.(interface{ GetClientCapabilities() mcp.ClientCapabilities })
	if !ok {
		return "", false
	}
	if el := info.GetClientCapabilities().Elicitation; el == nil || el.URL == nil {
		return "", false
	}
	res, err := srv.RequestURLElicitation(ctx, sess, id, link, message)
	if err != nil || res == nil {
		log.Debug("URL elicitation not sent; the tool error names the link", "error", err)
		return "", false
	}
	return string(res.Action), true
}
