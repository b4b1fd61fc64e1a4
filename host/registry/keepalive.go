package registry

import (
	"context"

	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// keepalive probes the session: ping, or tools/list once the server said
// it does not know ping (and has tools). A server with neither is not
// probed. The 2026-07-28 revision has no ping: server/discover, as cheap
// and stateless, stands in for it.
func (s *server) keepalive(c *conn, pingUnsupported *bool) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.m.timings.ProbeTimeout)
	defer cancel()
	if c.sess.Stateless() {
		return c.sess.Ping(ctx)
	}
	return probe(ctx, c.sess, c.sess.Capabilities().Tools != nil, pingUnsupported)
}

// pinger is the part of a session the keepalive uses.
type pinger interface {
	Ping(ctx context.Context) error
	ListToolsPage(ctx context.Context, cursor string) ([]mcpvalue.Tool, string, error)
}

// probe runs one keepalive probe on cl. When the server answers ping with
// a JSON-RPC error (-32601 "method not found", or any other error of its
// own: it is alive and read the request, but does not do ping) it latches
// *pingUnsupported and, for a server with tools, uses tools/list from then
// on; a server with neither is not probed. A ping that got no answer (the
// connection broke, the probe timed out) is a failed probe.
func probe(ctx context.Context, cl pinger, hasTools bool, pingUnsupported *bool) error {
	if !*pingUnsupported {
		err := failure.FromClient(cl.Ping(ctx))
		if err == nil || !failure.Answered(err) {
			return err
		}
		*pingUnsupported = true
	}
	if !hasTools {
		return nil
	}
	_, _, err := cl.ListToolsPage(ctx, "")
	return err
}
