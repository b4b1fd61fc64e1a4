package registry

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hermes-agent/hermes/host/fields"
	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// Progress is one notifications/progress of a running tool call, as the
// server sent it (Message unescaped and cut to MaxProgressMessage bytes:
// it is the server's text, for the caller to escape).
type Progress struct {
	// Progress grows with each notification; Total is 0 when unknown.
	Progress, Total float64
	Message         string
}

// MaxProgressMessage bounds a progress message kept from a server.
const MaxProgressMessage = 1024

type progressKey struct{}

// WithProgress returns ctx carrying fn: a tool call made with it (Call,
// CallTool) routes the server's progress notifications for the call's
// progress token to fn. fn runs on the connection's reader: it must
// return at once.
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ProgressFrom returns the callback WithProgress put in ctx, or nil.
func ProgressFrom(ctx context.Context) func(Progress) {
	fn, _ := ctx.Value(progressKey{}).(func(Progress))
	return fn
}

// progressRoutes maps the progress tokens of a server's running calls to
// their callbacks. Every tools/call carries a token of its own, so that a
// server may send progress; tokens are "hermes-<n>", unique in the run.
type progressRoutes struct {
	mu     sync.Mutex
	routes map[string]func(Progress)
}

var progressSeq atomic.Uint64

// open returns a new token, routed to fn when fn is not nil, and the
// function that drops the route.
func (r *progressRoutes) open(fn func(Progress)) (string, func()) {
	token := "hermes-" + strconv.FormatUint(progressSeq.Add(1), 10)
	if fn == nil {
		return token, func() {}
	}
	r.mu.Lock()
	if r.routes == nil {
		r.routes = map[string]func(Progress){}
	}
	r.routes[token] = fn
	r.mu.Unlock()
	return token, func() {
		r.mu.Lock()
		delete(r.routes, token)
		r.mu.Unlock()
	}
}

// deliver routes a notifications/progress to its call's callback; a token
// of no running call is dropped.
func (r *progressRoutes) deliver(n mcpvalue.Notification) {
	f := n.Params
	token, ok := f["progressToken"].(string)
	if !ok {
		return
	}
	r.mu.Lock()
	fn := r.routes[token]
	r.mu.Unlock()
	if fn == nil {
		return
	}
	p := Progress{}
	p.Progress, _ = fields.Number(f["progress"])
	p.Total, _ = fields.Number(f["total"])
	if msg, ok := f["message"].(string); ok {
		if len(msg) > MaxProgressMessage {
			msg = msg[:MaxProgressMessage]
		}
		p.Message = msg
	}
	fn(p)
}
