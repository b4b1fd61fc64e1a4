package registry

import (
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/mark3labs/mcp-go/mcp"
)

// RecordsFrom is the RecordSource of lazy start over the store of what
// servers offered: a server's record is used only when it was listed with
// the entry's current connection settings (offered.Store.Load); a missing,
// stale, damaged, oversized or foreign-owned record is not, and the server
// connects at Start as without Lazy (its next listing rebuilds the
// record).
func RecordsFrom(st *offered.Store) RecordSource {
	return func(srv *config.Server) ([]mcp.Tool, mcp.ServerCapabilities, time.Time, bool) {
		r, err := st.Load(srv)
		if err != nil {
			return nil, mcp.ServerCapabilities{}, time.Time{}, false
		}
		return r.Tools, r.Capabilities, r.FetchedAt, true
	}
}
