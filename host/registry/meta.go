package registry

import (
	"context"

	"github.com/hermes-agent/hermes/host/session"
)

// WithMeta returns ctx carrying meta: a tool call made with it (Call,
// CallTool) adds these fields to its request's params._meta, beside the
// call's own progress token, which they never replace. The gateway puts
// the W3C trace context of its upstream span there (traceparent,
// tracestate), so that the server continues the gateway's trace.
func WithMeta(ctx context.Context, meta map[string]any) context.Context {
	return session.WithCallMeta(ctx, meta)
}
