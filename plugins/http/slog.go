package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// hclogHandler sends mcp-go's slog records to the plugin's hclog logger, one
// level lower than mcp-go gives them: its informational lines are chatter
// for the host log.
type hclogHandler struct {
	log   hclog.Logger
	attrs []any
	// scrub removes secrets (URL queries, header values) from text.
	scrub func(string) string
}

// newSlogger returns a *slog.Logger writing to log, every message and
// value passed through scrub first.
func newSlogger(log hclog.Logger, scrub func(string) string) *slog.Logger {
	return slog.New(&hclogHandler{log: log.Named("mcp-go"), scrub: scrub})
}

// value turns an attribute value into something safe to log.
func (h *hclogHandler) value(v slog.Value) any {
	switch v.Kind() {
	case slog.KindString:
		return h.scrub(v.String())
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return h.scrub(err.Error())
		}
		if s, ok := v.Any().(fmt.Stringer); ok {
			return h.scrub(s.String())
		}
	}
	return v.Any()
}

// Enabled implements slog.Handler.
func (h *hclogHandler) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (h *hclogHandler) Handle(_ context.Context, r slog.Record) error {
	args := append([]any(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		args = append(args, a.Key, h.value(a.Value))
		return true
	})
	msg := h.scrub(r.Message)
	switch {
	case r.Level >= slog.LevelError:
		h.log.Warn(msg, args...)
	case r.Level >= slog.LevelWarn:
		h.log.Info(msg, args...)
	case r.Level >= slog.LevelInfo:
		h.log.Debug(msg, args...)
	default:
		h.log.Trace(msg, args...)
	}
	return nil
}

// WithAttrs implements slog.Handler.
func (h *hclogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := &hclogHandler{log: h.log, attrs: append([]any(nil), h.attrs...), scrub: h.scrub}
	for _, a := range attrs {
		n.attrs = append(n.attrs, a.Key, h.value(a.Value))
	}
	return n
}

// WithGroup implements slog.Handler.
func (h *hclogHandler) WithGroup(name string) slog.Handler {
	return &hclogHandler{log: h.log.Named(name), attrs: h.attrs, scrub: h.scrub}
}
