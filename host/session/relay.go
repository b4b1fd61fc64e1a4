package session

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// This file ties what a server asks (sampling, elicitation) to the call it
// asks it for, so that a caller that serves many people (the gateway) can
// pass each request on to the one who made the call, and to no one else.
//
// A request is tied to its call by context where the protocol allows it:
// on the 2026-07-28 revision a server asks within the call's own result
// (input_required), and mcp-go's client answers it with the call's context,
// which carries the call's relay. On earlier revisions a server's request
// arrives on its own; it is tied to the calls in flight on the connection
// when it arrived (pluginconn.DialOptions.RequestContext records them on
// the reader, before the answer of any of those calls can be read): when
// every one of them has the same owner, the request is that owner's. When
// they have several, it cannot be tied to one, and is declined.

// Relay passes what a server asks during one call on to whoever made the
// call.
type Relay interface {
	// Relay sends a request of method (MethodSampling or
	// MethodElicitation) with params as the server wrote them, and
	// returns the result of its answer as it was written. An error is
	// the answer the server gets (a pluginconn.CodedError keeps its
	// JSON-RPC code).
	Relay(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// The methods a Relay is asked to relay.
const (
	MethodSampling    = string(mcp.MethodSamplingCreateMessage)
	MethodElicitation = string(mcp.MethodElicitationCreate)
)

// CallRelay is a call's relay and who the call is for.
type CallRelay struct {
	// Owner names who made the call: one person's one client session. A
	// request that cannot be tied by context goes to the owner of the
	// calls in flight only when they all have the same one. Not "".
	Owner string
	Relay Relay
}

type relayKey struct{}

// WithRelay returns ctx carrying r: what the server asks during a call
// made with it (Session.Call) goes to r instead of the session's own
// handlers.
func WithRelay(ctx context.Context, r CallRelay) context.Context {
	return context.WithValue(ctx, relayKey{}, r)
}

// RelayFrom returns the relay WithRelay put in ctx.
func RelayFrom(ctx context.Context) (CallRelay, bool) {
	r, ok := ctx.Value(relayKey{}).(CallRelay)
	return r, ok && r.Relay != nil && r.Owner != ""
}

// inflight are the calls in flight on one connection, and how many each
// owner has ("" for calls without a relay: the host's own).
type inflight struct {
	mu    sync.Mutex
	seq   uint64
	calls map[uint64]CallRelay
	count map[string]int
}

// enter records a call made with ctx until the returned function is called,
// which must be after its answer was read.
func (f *inflight) enter(ctx context.Context) func() {
	if f == nil {
		return func() {}
	}
	r, relayed := RelayFrom(ctx)
	if !relayed {
		r = CallRelay{}
	}
	f.mu.Lock()
	if f.calls == nil {
		f.calls, f.count = map[uint64]CallRelay{}, map[string]int{}
	}
	f.seq++
	id := f.seq
	f.calls[id] = r
	f.count[r.Owner]++
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.calls, id)
		if f.count[r.Owner]--; f.count[r.Owner] == 0 {
			delete(f.count, r.Owner)
		}
	}
}

// arrival is who had calls in flight when a server's request arrived.
type arrival struct {
	// owners is how many owners had calls in flight; relay is the relay
	// of the oldest call of the only one, when it has one.
	owners int
	relay  Relay
	// relays are the relays of every call in flight, told when the
	// request is declined (Decliner).
	relays []Relay
}

// Decliner is a Relay told that a request arriving during its call was
// declined for being untied (UntiedError): the call may fail for it, and
// the failure is no fault of the server's.
type Decliner interface {
	Declined()
}

type arrivalKey struct{}

// requestContext is the context of a server's request arriving now: it
// carries who had calls in flight (pluginconn.DialOptions.RequestContext).
func (f *inflight) requestContext() context.Context {
	f.mu.Lock()
	a := arrival{owners: len(f.count)}
	var oldest uint64
	for id, r := range f.calls {
		if r.Relay == nil {
			continue
		}
		a.relays = append(a.relays, r.Relay)
		if a.owners == 1 && (oldest == 0 || id < oldest) {
			oldest, a.relay = id, r.Relay
		}
	}
	f.mu.Unlock()
	return context.WithValue(context.Background(), arrivalKey{}, a)
}

// UntiedError declines a server's request that cannot be tied to one
// caller: calls of several were in flight on its connection when it
// arrived, and the request does not say which it is for.
type UntiedError struct {
	Method string
	// Callers is how many callers had calls in flight.
	Callers int
}

func (e *UntiedError) Error() string {
	return fmt.Sprintf("%s declined: calls of %d callers were in flight on this connection when it arrived and the request does not say which it is for, so it cannot be passed on to the one who made the call (a server that asks within the call's own result, protocol revision 2026-07-28, is always tied to its call)",
		e.Method, e.Callers)
}

// JSONRPCCode is the code the server receives: -1, as for every declined
// sampling request (REFERENCE.md §6).
func (e *UntiedError) JSONRPCCode() int { return -1 }

// route is where a server's request of method, handled with ctx, goes: the
// relay of its call, or none (the session's own handler), or an error
// when it cannot be tied to one caller.
func route(ctx context.Context, method string) (Relay, error) {
	if r, ok := RelayFrom(ctx); ok {
		return r.Relay, nil
	}
	a, ok := ctx.Value(arrivalKey{}).(arrival)
	switch {
	case !ok || a.owners == 0:
		// Outside any call: the host's own.
		return nil, nil
	case a.owners > 1:
		for _, r := range a.relays {
			if d, ok := r.(Decliner); ok {
				d.Declined()
			}
		}
		return nil, &UntiedError{Method: method, Callers: a.owners}
	}
	// One owner: the host itself ("", no relay) or one caller.
	return a.relay, nil
}

// relaySampling passes a sampling/createMessage on to r and reads its
// answer back.
func relaySampling(ctx context.Context, r Relay, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	raw, err := relayRaw(ctx, r, MethodSampling, req.CreateMessageParams)
	if err != nil {
		return nil, err
	}
	var res mcp.CreateMessageResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("the caller's answer to %s: %w", MethodSampling, err)
	}
	content, err := mcp.ParseSamplingContent(res.Content)
	if err != nil {
		return nil, fmt.Errorf("the caller's answer to %s: %w", MethodSampling, err)
	}
	res.Content = content
	return &res, nil
}

// relayElicitation passes an elicitation/create on to r and reads its
// answer back.
func relayElicitation(ctx context.Context, r Relay, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	raw, err := relayRaw(ctx, r, MethodElicitation, req.Params)
	if err != nil {
		return nil, err
	}
	var res mcp.ElicitationResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("the caller's answer to %s: %w", MethodElicitation, err)
	}
	if res.Action == "" {
		return nil, fmt.Errorf("the caller's answer to %s has no action", MethodElicitation)
	}
	return &res, nil
}

func relayRaw(ctx context.Context, r Relay, method string, params any) (json.RawMessage, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encode %s to relay it: %w", method, err)
	}
	return r.Relay(ctx, method, b)
}
