package rpcx

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCalls: a call's context ends when the host cancels it by id, when
// every call is cancelled, at its deadline, and when the call ends.
func TestCalls(t *testing.T) {
	var c Calls
	a, endA := c.Begin(1, time.Time{})
	b, endB := c.Begin(2, time.Time{})
	d, endD := c.Begin(3, time.Now().Add(-time.Second))
	defer endD()
	c.Cancel(1)
	if !errors.Is(a.Err(), context.Canceled) || b.Err() != nil {
		t.Fatalf("after Cancel(1): a=%v b=%v", a.Err(), b.Err())
	}
	if !errors.Is(d.Err(), context.DeadlineExceeded) {
		t.Fatalf("past its deadline: %v", d.Err())
	}
	c.CancelAll()
	if b.Err() == nil {
		t.Fatal("CancelAll left a call running")
	}
	endA()
	endB()
	c.Cancel(1) // an ended call: nothing happens
	if len(c.m) != 1 {
		t.Fatalf("%d calls tracked, want the one not ended", len(c.m))
	}
}

// TestCancelOvertakesCall: net/rpc serves calls concurrently, so a cancel
// may arrive before its call; the call then begins cancelled.
func TestCancelOvertakesCall(t *testing.T) {
	var c Calls
	c.Cancel(7)
	ctx, end := c.Begin(7, time.Time{})
	defer end()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("a call whose cancel came first runs: %v", ctx.Err())
	}
	other, endOther := c.Begin(8, time.Time{})
	defer endOther()
	if other.Err() != nil {
		t.Fatal("an early cancel ended another call")
	}
}
