package session

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
)

// NotifyRootsChanged tells the server that the host's roots changed
// (notifications/roots/list_changed), so that it asks for them again. It
// sends nothing when the session offers no roots, or speaks 2026-07-28,
// where a server asks for the roots with each request that needs them
// (input_required) and keeps no list to refresh; sent reports whether it
// did.
func (s *Session) NotifyRootsChanged(ctx context.Context) (sent bool, err error) {
	if !s.offersRoots || mcp.IsModernProtocol(s.Protocol.Revision) {
		return false, nil
	}
	return true, s.Client.RootListChanges(ctx)
}
