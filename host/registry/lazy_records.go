package registry

import (
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/offered"
)

// RecordsFrom is the RecordSource of lazy start over the store of what
// servers offered: a server's record is used only when it was listed with
// the entry's current connection settings (offered.Store.Load); a missing,
// stale, damaged, oversized or foreign-owned record is not, and the server
// connects at Start as without Lazy (its next listing rebuilds the
// record).
func RecordsFrom(st *offered.Store) RecordSource {
	return func(srv *config.Server) (*offered.Record, bool) {
		r, err := st.Load(srv)
		if err != nil {
			return nil, false
		}
		return r, true
	}
}
