package rpcx

import (
	"context"
	"errors"
	"net"
	"net/rpc"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/sdk"
)

type WaitArgs struct {
	Call
	Name string
}

type WaitReply struct {
	Deadline time.Time
	Err      *sdk.Error
}

func (r *WaitReply) Failure() *sdk.Error { return r.Err }

// callee answers Wait when its call's context ends, with the deadline it
// saw; Fail fails with a code.
type callee struct {
	calls   Calls
	started chan struct{}
	ended   chan error
}

func (c *callee) Wait(args WaitArgs, reply *WaitReply) error {
	return Run(&c.calls, &args, &reply.Deadline, &reply.Err, func(ctx context.Context) (time.Time, error) {
		d, _ := ctx.Deadline()
		if args.Name == "now" {
			return d, nil
		}
		c.started <- struct{}{}
		<-ctx.Done()
		c.ended <- ctx.Err()
		return d, ctx.Err()
	})
}

func (c *callee) Fail(args WaitArgs, reply *ErrReply) error {
	return Do(&c.calls, &args, &reply.Err, func(context.Context) error { return sdk.NewError(sdk.CodeNotFound, "no %s", args.Name) })
}

func (c *callee) Cancel(args CancelArgs, _ *ErrReply) error {
	c.calls.Cancel(args.ID)
	return nil
}

func pair(t *testing.T) (*Client, *callee) {
	t.Helper()
	a, b := net.Pipe()
	s := rpc.NewServer()
	ce := &callee{started: make(chan struct{}, 1), ended: make(chan error, 1)}
	if err := s.RegisterName("Plugin", ce); err != nil {
		t.Fatal(err)
	}
	go s.ServeConn(b)
	c := NewClient(rpc.NewClient(a), "test plugin")
	t.Cleanup(func() { c.Close() })
	return c, ce
}

// The caller's deadline reaches the callee's context; the callee's error
// comes back with its code; when the caller gives up, the callee's context
// ends too; a closed connection is CodeClosed wrapping ErrNotSent.
func TestCallCarriesDeadlineAndCancel(t *testing.T) {
	c, ce := pair(t)
	deadline := time.Now().Add(time.Hour).Round(time.Millisecond)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var r WaitReply
	if err := c.Call(ctx, "Plugin.Wait", &WaitArgs{Name: "now"}, &r); err != nil || !r.Deadline.Equal(deadline) {
		t.Fatalf("the callee saw deadline %v (%v), want %v", r.Deadline, err, deadline)
	}
	if err := c.Call(ctx, "Plugin.Fail", &WaitArgs{Name: "x"}, &ErrReply{}); sdk.ErrorCode(err) != sdk.CodeNotFound {
		t.Fatalf("the callee's error came back as %v", err)
	}

	wctx, wcancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Call(wctx, "Plugin.Wait", &WaitArgs{Name: "wait"}, &WaitReply{}) }()
	<-ce.started
	wcancel()
	if err := <-errc; !errors.Is(err, context.Canceled) || sdk.ErrorCode(err) != sdk.CodeCanceled {
		t.Fatalf("a call the caller gave up returned %v", err)
	}
	if err := <-ce.ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("the callee's context ended with %v, want canceled", err)
	}

	c.Close()
	err := c.Call(context.Background(), "Plugin.Fail", &WaitArgs{}, &ErrReply{})
	if sdk.ErrorCode(err) != sdk.CodeClosed || !errors.Is(err, ErrNotSent) {
		t.Fatalf("a call on a closed connection returned %v", err)
	}
}
