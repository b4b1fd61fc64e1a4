// Package rpcx is the one way a call crosses the process boundary on
// go-plugin's net/rpc, in both directions (host → plugin, and a plugin's
// callbacks into the host): the caller's deadline travels with the call,
// the callee rebuilds a context from it, and when the caller's context ends
// first the callee's is cancelled by the call's id. With it every RPC
// method is one line on each side: Client.Call on the caller's, Run on the
// callee's.
package rpcx

import (
	"context"
	"errors"
	"fmt"
	"net/rpc"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
)

// Call is the header every call's arguments embed: net/rpc carries no
// context, so the callee rebuilds one from Deadline, and the caller cancels
// it with the callee's Cancel method and ID.
type Call struct {
	ID       uint64
	Deadline time.Time
	// Interactive says the host's UI has a user behind it for this call
	// (auth plugins only).
	Interactive bool
}

func (c *Call) header() *Call { return c }

// Args is the arguments of a call: a struct embedding Call.
type Args interface{ header() *Call }

// Reply is the reply of a call: a struct with the callee's error.
type Reply interface{ Failure() *sdk.Error }

// CancelArgs cancels the call with ID (method "Plugin.Cancel").
type CancelArgs struct {
	ID uint64
}

// ErrReply carries only an error.
type ErrReply struct {
	Err *sdk.Error
}

// Failure returns the callee's error.
func (r *ErrReply) Failure() *sdk.Error { return r.Err }

// CancelMethod is the method every callee serves to cancel a call.
const CancelMethod = "Plugin.Cancel"

// ErrNotSent is wrapped by the error (a CodeClosed one) of a call that never
// reached the callee because its connection was already closed: the callee
// did nothing, so the call may be sent again to a new process.
var ErrNotSent = errors.New("the call was not sent")

// cancelBound bounds telling the callee that a call was cancelled.
const cancelBound = 5 * time.Second

// Client makes calls on one net/rpc connection.
type Client struct {
	rpc *rpc.Client
	// who names the callee in errors, e.g. `auth plugin of "x"`.
	who string
	ids atomic.Uint64
	// Interactive is ANDed into every call's Call.Interactive.
	Interactive func() bool
}

// NewClient returns a Client on c; who names the callee in errors. A nil c
// answers every call with a CodeContract error (the callee serves no
// calls).
func NewClient(c *rpc.Client, who string) *Client {
	return &Client{rpc: c, who: who}
}

// Call sends method with args on the client's connection and waits for its
// reply; see CallOn.
func (c *Client) Call(ctx context.Context, method string, args Args, reply Reply) error {
	return c.CallOn(ctx, nil, method, args, reply)
}

// CallOn sends method with args on conn (nil: the client's own connection),
// with a fresh id and ctx's deadline in args' header, and waits for the
// reply, the end of ctx (the callee's call is then cancelled, on the
// client's own connection) or the end of the connection. It returns the
// connection's failure (CodeClosed; wrapping ErrNotSent when the call never
// left), ctx's error (CodeCanceled or CodeTimeout), or the reply's own.
func (c *Client) CallOn(ctx context.Context, conn *rpc.Client, method string, args Args, reply Reply) error {
	if conn == nil {
		conn = c.rpc
	}
	if conn == nil {
		return sdk.NewError(sdk.CodeContract, "%s serves no calls (%s)", c.who, method)
	}
	hdr := args.header()
	hdr.ID = c.ids.Add(1)
	if d, ok := ctx.Deadline(); ok {
		hdr.Deadline = d
	}
	if hdr.Interactive && c.Interactive != nil {
		hdr.Interactive = c.Interactive()
	}
	call := conn.Go(method, args, reply, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
		switch {
		case errors.Is(call.Error, rpc.ErrShutdown):
			return fmt.Errorf("%w: %w", sdk.NewError(sdk.CodeClosed, "%s: %s: its connection is closed", c.who, method), ErrNotSent)
		case call.Error != nil:
			return sdk.NewError(sdk.CodeClosed, "%s: %s: %v", c.who, method, call.Error)
		}
		if e := reply.Failure(); e != nil {
			return e
		}
		return nil
	case <-ctx.Done():
		c.cancel(hdr.ID)
		return sdk.AsError(ctx.Err())
	}
}

// cancel tells the callee that call id was abandoned, within a bound.
func (c *Client) cancel(id uint64) {
	end, stop := context.WithTimeout(context.Background(), cancelBound)
	defer stop()
	cc := c.rpc.Go(CancelMethod, CancelArgs{ID: id}, &ErrReply{}, make(chan *rpc.Call, 1))
	select {
	case <-cc.Done:
	case <-end.Done():
	}
}

// Close closes the connection.
func (c *Client) Close() error {
	if c == nil || c.rpc == nil {
		return nil
	}
	return c.rpc.Close()
}

// Run runs f in the context of the call args names (its deadline, cancelled
// by Cancel) and puts f's result in *out and its error, for the wire, in
// *fail. It is the whole body of a callee's RPC method.
func Run[T any](calls *Calls, args Args, out *T, fail **sdk.Error, f func(context.Context) (T, error)) error {
	hdr := args.header()
	ctx, end := calls.Begin(hdr.ID, hdr.Deadline)
	defer end()
	v, err := f(ctx)
	*out, *fail = v, sdk.AsError(err)
	return nil
}

// Do is Run for a call whose only answer is its error.
func Do(calls *Calls, args Args, fail **sdk.Error, f func(context.Context) error) error {
	hdr := args.header()
	ctx, end := calls.Begin(hdr.ID, hdr.Deadline)
	defer end()
	*fail = sdk.AsError(f(ctx))
	return nil
}

// ServeCallbacks serves receiver (a net/rpc receiver, registered as
// "Plugin") on the broker for a plugin's calls back into the host, and
// returns the broker id to send to the plugin.
func ServeCallbacks(b *plugin.MuxBroker, receiver any) uint32 {
	id := b.NextId()
	go b.AcceptAndServe(id, receiver)
	return id
}

// DialCallbacks connects to the callback server the host announced with
// id. An id of 0 means the host serves no callbacks: the Client then
// answers every call with a CodeContract error.
func DialCallbacks(b *plugin.MuxBroker, id uint32) (*Client, error) {
	if id == 0 {
		return NewClient(nil, "the host"), nil
	}
	c, err := b.Dial(id)
	if err != nil {
		return nil, sdk.NewError(sdk.CodeClosed, "dial the host's callback server: %v", err)
	}
	return NewClient(rpc.NewClient(c), "host callback"), nil
}
