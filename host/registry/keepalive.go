package registry

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"
)

// keepalive probes the session: ping, or tools/list once the server said
// it does not know ping (and has tools). A server with neither is not
// probed. The 2026-07-28 revision has no ping: server/discover, as cheap
// and stateless, stands in for it.
func (s *server) keepalive(c *conn, pingUnsupported *bool) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.m.timings.ProbeTimeout)
	defer cancel()
	if mcp.IsModernProtocol(c.sess.Protocol.Revision) {
		_, err := c.sess.Client.Discover(ctx, mcp.DiscoverRequest{})
		return err
	}
	return probe(ctx, c.sess.Client, c.sess.Init.Capabilities.Tools != nil, pingUnsupported)
}

// pinger is the part of an MCP client the keepalive uses.
type pinger interface {
	Ping(ctx context.Context) error
	ListToolsByPage(ctx context.Context, req mcp.ListToolsRequest) (*mcp.ListToolsResult, error)
}

// probe runs one keepalive probe on cl. When ping is answered with "method
// not found" it latches *pingUnsupported and, for a server with tools,
// uses tools/list from then on; a server with neither is not probed.
func probe(ctx context.Context, cl pinger, hasTools bool, pingUnsupported *bool) error {
	if !*pingUnsupported {
		err := cl.Ping(ctx)
		if err == nil || !isMethodNotFound(err) {
			return err
		}
		*pingUnsupported = true
	}
	if !hasTools {
		return nil
	}
	_, err := cl.ListToolsByPage(ctx, mcp.ListToolsRequest{})
	return err
}

// isMethodNotFound reports a JSON-RPC -32601 reply, or a message saying the
// same.
func isMethodNotFound(err error) bool {
	if errors.Is(err, mcp.ErrMethodNotFound) {
		return true
	}
	msg := err.Error()
	for _, m := range []string{"method not found", "unknown method", "not found: ping", "-32601"} {
		if containsFold(msg, m) {
			return true
		}
	}
	return false
}
