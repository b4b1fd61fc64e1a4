package cmdkit

import (
	"errors"
	"fmt"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/toolview"
)

// Lazy start from the command line (issue 25): which commands register a
// server's tools from the store of what it offered instead of starting it,
// and how listings say where a server's tools came from.

// CacheState says what the store holds for a server, for listings.
type CacheState struct {
	// State is fresh (usable for lazy start), stale (made with other
	// connection settings), none (never connected) or unusable (damaged,
	// oversized, foreign-owned: rebuilt at the next connection).
	State string
	// Tools counts the tools of the record; FetchedAt is when it was
	// listed (zero for none and unusable).
	Tools     int
	FetchedAt time.Time
	rec       *offered.Record
}

// Cache states of a server's record, as listings show them.
const (
	CacheFresh    = "fresh"
	CacheStale    = "stale"
	CacheNone     = "none"
	CacheUnusable = "unusable"
)

// CacheOf reads srv's record (bounded by its max_message_mb) without
// connecting to anything.
func CacheOf(st *offered.Store, srv *config.Server) CacheState {
	r, err := st.LoadAny(srv.StateKey(), offered.MaxBytes(srv))
	var ue *offered.UnusableError
	switch {
	case errors.As(err, &ue):
		return CacheState{State: CacheUnusable}
	case err != nil:
		return CacheState{State: CacheNone}
	}
	c := CacheState{State: CacheFresh, Tools: len(r.Tools), FetchedAt: r.FetchedAt, rec: r}
	if r.SettingsDigest != offered.SettingsDigest(srv) {
		c.State = CacheStale
	}
	return c
}

// Text is the cache as a listing's column says it.
func (c CacheState) Text(now time.Time) string {
	switch c.State {
	case CacheFresh:
		return fmt.Sprintf("%s, %s ago", Plural(c.Tools, "tool"), Age(now.Sub(c.FetchedAt)))
	case CacheStale:
		return fmt.Sprintf("stale (settings changed), %s ago", Age(now.Sub(c.FetchedAt)))
	case CacheUnusable:
		return "unusable (rebuilt at the next connection)"
	}
	return "never connected"
}

// Age is a duration as people say it: 40s, 5m, 3h, 2d.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d/time.Second), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// CachedToolNames are the tools of srv's fresh record that pass its tools
// filter, by their MCP names; ok is false without a fresh record.
func CachedToolNames(st *offered.Store, srv *config.Server) (names []string, ok bool) {
	r, err := st.Load(srv)
	if err != nil {
		return nil, false
	}
	f := toolview.Filter{Include: srv.Tools.Include, Exclude: srv.Tools.Exclude}
	for _, t := range r.Tools {
		if f.Allows(t.Name) {
			names = append(names, t.Name)
		}
	}
	return names, true
}

// ListingSource says where a listed server's tools came from: running
// (started for this listing, or by this process), or the record of its
// last connection (cachedAt in RFC 3339, cachedAge as people say it).
func ListingSource(st registry.ServerStatus, now time.Time) (running bool, cachedAt, cachedAge string) {
	if st.State == registry.StateIdle && !st.Lazy.RecordAt.IsZero() {
		return false, st.Lazy.RecordAt.UTC().Format(time.RFC3339), Age(now.Sub(st.Lazy.RecordAt))
	}
	return st.State == registry.StateConnected, "", ""
}

// Json is the cache as 'hermes mcp list --json' reports it (nil: none).
func (c CacheState) Json() *JSONCache {
	switch c.State {
	case CacheNone, "":
		return nil
	case CacheUnusable:
		return &JSONCache{State: c.State}
	}
	return &JSONCache{State: c.State, Tools: c.Tools, FetchedAt: c.FetchedAt.UTC().Format(time.RFC3339)}
}
