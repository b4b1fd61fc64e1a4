package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Session is what mcp.server.session.duration needs of one MCP session the
// gateway serves. The gateway's session ids are self-contained and a session
// may end on another replica than the one that opened it, so nothing is held
// here between the start and the end: the caller keeps Started (in the
// session id) and hands it back to SessionEnded.
type Session struct {
	// Protocol is the session's MCP revision (mcp.protocol.version).
	Protocol string
	// Started is when the session was opened.
	Started time.Time
}

// SessionStarted stamps a session opened now in the given MCP revision.
func (t *Telemetry) SessionStarted(protocol string) Session {
	return Session{Protocol: protocol, Started: time.Now()}
}

// SessionEnded records the duration of a session that ends now (a client's
// DELETE, or the gateway ending it); o says whether it ended with an error.
// A session whose start is unknown or in the future is not recorded.
func (t *Telemetry) SessionEnded(ctx context.Context, s Session, o Outcome) {
	p := t.acquire()
	defer p.release()
	if s.Started.IsZero() || !p.serverSession.Enabled(ctx) {
		return
	}
	d := time.Since(s.Started)
	if d < 0 {
		return
	}
	a := make([]attribute.KeyValue, 0, 4)
	a = appendConnection(a, Request{Protocol: clip(s.Protocol), Transport: TransportTCP})
	if errType := o.errorType(); errType != "" {
		a = append(a, keyErrorType.String(errType))
	}
	p.serverSession.Record(ctx, d.Seconds(), metric.WithAttributes(a...))
}
