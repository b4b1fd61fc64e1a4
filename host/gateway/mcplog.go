package gateway

import (
	"context"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// mcpLog is mcp-go's transport log (slog) written to the gateway's hclog:
// its routine events (a session swept when idle) at debug, its warnings
// and errors as they are.
type mcpLog struct {
	log   hclog.Logger
	attrs []any
}

func (h mcpLog) Enabled(context.Context, slog.Level) bool { return true }

func (h mcpLog) Handle(_ context.Context, r slog.Record) error {
	args := append([]any(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		args = append(args, a.Key, a.Value.String())
		return true
	})
	switch {
	case r.Level >= slog.LevelError:
		h.log.Error(r.Message, args...)
	case r.Level >= slog.LevelWarn:
		h.log.Warn(r.Message, args...)
	default:
		h.log.Debug(r.Message, args...)
	}
	return nil
}

func (h mcpLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := mcpLog{log: h.log, attrs: append([]any(nil), h.attrs...)}
	for _, a := range attrs {
		out.attrs = append(out.attrs, a.Key, a.Value.String())
	}
	return out
}

func (h mcpLog) WithGroup(name string) slog.Handler {
	return mcpLog{log: h.log.Named(name), attrs: h.attrs}
}
