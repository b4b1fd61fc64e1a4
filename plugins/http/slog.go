package main

import (
	"context"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// hclogHandler sends mcp-go's slog records to the plugin's hclog logger, one
// level lower than mcp-go gives them: its informational lines are chatter
// for the host log.
type hclogHandler struct {
	log   hclog.Logger
	attrs []any
}

// newSlogger returns a *slog.Logger writing to log.
func newSlogger(log hclog.Logger) *slog.Logger {
	return slog.New(&hclogHandler{log: log.Named("mcp-go")})
}

// Enabled implements slog.Handler.
func (h *hclogHandler) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (h *hclogHandler) Handle(_ context.Context, r slog.Record) error {
	args := append([]any(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		args = append(args, a.Key, a.Value.Any())
		return true
	})
	switch {
	case r.Level >= slog.LevelError:
		h.log.Warn(r.Message, args...)
	case r.Level >= slog.LevelWarn:
		h.log.Info(r.Message, args...)
	case r.Level >= slog.LevelInfo:
		h.log.Debug(r.Message, args...)
	default:
		h.log.Trace(r.Message, args...)
	}
	return nil
}

// WithAttrs implements slog.Handler.
func (h *hclogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := &hclogHandler{log: h.log, attrs: append([]any(nil), h.attrs...)}
	for _, a := range attrs {
		n.attrs = append(n.attrs, a.Key, a.Value.Any())
	}
	return n
}

// WithGroup implements slog.Handler.
func (h *hclogHandler) WithGroup(name string) slog.Handler {
	return &hclogHandler{log: h.log.Named(name), attrs: h.attrs}
}
