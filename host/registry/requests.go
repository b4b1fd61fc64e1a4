package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/elicit"
	"github.com/hermes-agent/hermes/host/sampling"
	"github.com/hermes-agent/hermes/host/session"
)

// Requests are the handlers of what one server asks of the host: a
// completion (sampling), input from the person (elicitation) and the
// workspace (roots). A nil handler declines: the session does not offer
// that capability to the server.
type Requests struct {
	Sampling    session.Sampler
	Elicitation session.Elicitor
	Roots       session.RootsLister
}

// Relay is a call's relay: who made the call (Owner, one person's one
// client session) and where what the server asks during it goes
// (session.CallRelay).
type Relay = session.CallRelay

type relayKey struct{}

// WithRelay returns ctx carrying r: the sampling and elicitation requests
// a server sends during a tool call made with it (Call, CallTool) go to r
// instead of the registry's own handlers, bounded by the server's
// sampling: and elicitation: blocks (time, max_tokens_cap, the request's
// size). A request the server sends while calls of several owners are in
// flight on its connection, and that does not say which call it is for,
// is declined (session.UntiedError).
func WithRelay(ctx context.Context, r Relay) context.Context {
	return context.WithValue(ctx, relayKey{}, r)
}

// relayed is ctx with the session's relay of the call, bounded for the
// server of cfg, when WithRelay put one in ctx; refused reports whether
// the relay refused or failed a request during the call (the caller's
// doing, not the server's: the breaker does not count the call's failure).
func relayed(ctx context.Context, cfg *config.Server) (_ context.Context, refused func() bool) {
	r, ok := ctx.Value(relayKey{}).(Relay)
	if !ok || r.Relay == nil || r.Owner == "" {
		return ctx, func() bool { return false }
	}
	b := &boundedRelay{next: r.Relay, server: cfg.Name}
	b.sampling, b.samplingErr = sampling.ParsePolicy(cfg.Sampling)
	b.elicit, b.elicitErr = elicit.ParseSettings(cfg.Name, cfg.Elicitation)
	return session.WithRelay(ctx, session.CallRelay{Owner: r.Owner, Relay: b}), b.refused.Load
}

// boundedRelay is a relay under one server's sampling: and elicitation:
// blocks.
type boundedRelay struct {
	next        session.Relay
	server      string
	sampling    sampling.Policy
	samplingErr error
	elicit      elicit.Settings
	elicitErr   error
	// refused: a request was refused or failed.
	refused atomic.Bool
}

// relayError is a relayed request declined before it was passed on.
type relayError struct{ msg string }

func (e *relayError) Error() string { return e.msg }

// JSONRPCCode is the code the server receives: -1, as for every declined
// sampling request (REFERENCE.md §6).
func (e *relayError) JSONRPCCode() int { return -1 }

func declined(format string, args ...any) error {
	return &relayError{msg: fmt.Sprintf(format, args...)}
}

// Declined marks the call: a request during it was declined untied.
func (b *boundedRelay) Declined() { b.refused.Store(true) }

func (b *boundedRelay) Relay(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	res, err := b.relay(ctx, method, params)
	if err != nil {
		b.refused.Store(true)
	}
	return res, err
}

func (b *boundedRelay) relay(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	var timeout time.Duration
	var key string
	switch method {
	case session.MethodSampling:
		switch {
		case b.samplingErr != nil:
			return nil, declined("%s declined: %v", method, b.samplingErr)
		case !b.sampling.Enabled:
			return nil, declined("%s declined: sampling is turned off for MCP server '%s' (mcp_servers.%s.sampling.enabled)", method, b.server, b.server)
		}
		var err error
		if params, err = boundSampling(params, b.server, b.sampling); err != nil {
			return nil, err
		}
		timeout, key = b.sampling.Timeout, "sampling.timeout"
	case session.MethodElicitation:
		switch {
		case b.elicitErr != nil:
			return nil, declined("%s declined: %v", method, b.elicitErr)
		case !b.elicit.Enabled:
			return nil, declined("%s declined: elicitation is turned off for MCP server '%s' (mcp_servers.%s.elicitation.enabled)", method, b.server, b.server)
		}
		timeout, key = b.elicit.Timeout, "elicitation.timeout"
	default:
		return nil, declined("%s is not passed on to the caller", method)
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := b.next.Relay(rctx, method, params)
	if err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return nil, declined("%s: no answer from the caller within %s (mcp_servers.%s.%s)", method, timeout, b.server, key)
	}
	return res, err
}

// boundSampling is a sampling request's params within policy p: at most
// MaxMessages messages, the whole at most MaxTextBytes plus MaxImageB64
// bytes, and maxTokens at most MaxTokensCap (lowered, as the host's own
// sampling lowers it).
func boundSampling(params json.RawMessage, server string, p sampling.Policy) (json.RawMessage, error) {
	if limit := p.MaxTextBytes + p.MaxImageB64; len(params) > limit {
		return nil, declined("%s declined: the request is %d bytes, over the %d bytes mcp_servers.%s.sampling.max_text_kb and max_image_kb allow", session.MethodSampling, len(params), limit, server)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(params, &fields); err != nil {
		return nil, declined("%s declined: its params are not a JSON object: %v", session.MethodSampling, err)
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(fields["messages"], &msgs); err != nil || len(msgs) == 0 {
		return nil, declined("%s declined: it has no messages", session.MethodSampling)
	}
	if len(msgs) > p.MaxMessages {
		return nil, declined("%s declined: %d messages, over mcp_servers.%s.sampling.max_messages (%d)", session.MethodSampling, len(msgs), server, p.MaxMessages)
	}
	var maxTokens int
	if err := json.Unmarshal(fields["maxTokens"], &maxTokens); err != nil || maxTokens <= 0 || maxTokens > p.MaxTokensCap {
		fields["maxTokens"], _ = json.Marshal(p.MaxTokensCap)
		return json.Marshal(fields)
	}
	return params, nil
}
