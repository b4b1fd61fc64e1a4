package session

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// nameRelay is a relay that answers with its name; declined counts the
// untied declines it was told of.
type nameRelay struct {
	name     string
	declined int
}

func (r *nameRelay) Relay(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`"` + r.name + `"`), nil
}

func (r *nameRelay) Declined() { r.declined++ }

// A server's request is tied to the calls in flight when it arrived: to
// the only owner's, to none (the host's own) outside any relayed call,
// and declined when several owners had calls in flight, whatever happened
// to those calls after it arrived.
func TestRequestTiedToTheCallsInFlightWhenItArrived(t *testing.T) {
	var f inflight
	ctx := context.Background()
	alice, bob := &nameRelay{name: "alice"}, &nameRelay{name: "bob"}
	aliceCtx := WithRelay(ctx, CallRelay{Owner: "alice", Relay: alice})
	bobCtx := WithRelay(ctx, CallRelay{Owner: "bob", Relay: bob})

	if r, err := route(f.requestContext(), MethodSampling); r != nil || err != nil {
		t.Fatalf("outside any call: %v %v, want the host's own", r, err)
	}
	endA1 := f.enter(aliceCtx)
	endA2 := f.enter(aliceCtx)
	onlyAlice := f.requestContext()
	endB := f.enter(bobCtx)
	both := f.requestContext()
	// The calls end (and others start) before the handlers run: the ties
	// are those of the arrival.
	endA1()
	endA2()
	endB()
	endH := f.enter(ctx)
	defer endH()
	if r, err := route(onlyAlice, MethodSampling); err != nil || r != alice {
		t.Fatalf("with alice's calls alone in flight: %v %v", r, err)
	}
	var untied *UntiedError
	if r, err := route(both, MethodElicitation); r != nil || !errors.As(err, &untied) || untied.Callers != 2 {
		t.Fatalf("with alice's and bob's calls in flight: %v %v", r, err)
	}
	if alice.declined != 2 || bob.declined != 1 {
		t.Fatalf("declines told: alice's calls %d, bob's %d", alice.declined, bob.declined)
	}
	if r, err := route(f.requestContext(), MethodSampling); r != nil || err != nil {
		t.Fatalf("with only the host's own call in flight: %v %v", r, err)
	}
	// A call's own context ties it whatever is in flight.
	if r, err := route(WithRelay(both, CallRelay{Owner: "bob", Relay: bob}), MethodSampling); err != nil || r != bob {
		t.Fatalf("within bob's call's context: %v %v", r, err)
	}
}
