package session

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
)

type metaKey struct{}

// WithCallMeta returns ctx carrying meta: a call made with it (Session.Call)
// adds these fields to its request's params._meta (a W3C traceparent, so
// that the server continues the caller's trace). The host's own fields
// (progressToken) are never replaced.
func WithCallMeta(ctx context.Context, meta map[string]any) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	return context.WithValue(ctx, metaKey{}, meta)
}

// CallMetaFrom returns the fields WithCallMeta put in ctx, or nil.
func CallMetaFrom(ctx context.Context) map[string]any {
	m, _ := ctx.Value(metaKey{}).(map[string]any)
	return m
}

// callMeta is a call's params._meta: the host's progress token (nil:
// none) and the caller's fields in ctx; nil when there is neither.
func callMeta(ctx context.Context, progress any) *mcp.Meta {
	extra := CallMetaFrom(ctx)
	if progress == nil && len(extra) == 0 {
		return nil
	}
	m := &mcp.Meta{ProgressToken: progress}
	if len(extra) > 0 {
		m.AdditionalFields = make(map[string]any, len(extra))
		for k, v := range extra {
			if k != "progressToken" {
				m.AdditionalFields[k] = v
			}
		}
	}
	return m
}
