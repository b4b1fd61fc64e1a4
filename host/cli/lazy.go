package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/toolview"
)

// Lazy start from the command line (issue 25): which commands register a
// server's tools from the store of what it offered instead of starting it,
// and how listings say where a server's tools came from.

// cacheState says what the store holds for a server, for listings.
type cacheState struct {
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
	cacheFresh    = "fresh"
	cacheStale    = "stale"
	cacheNone     = "none"
	cacheUnusable = "unusable"
)

// cacheOf reads srv's record (bounded by its max_message_mb) without
// connecting to anything.
func cacheOf(st *offered.Store, srv *config.Server) cacheState {
	r, err := st.LoadAny(srv.StateKey(), offered.MaxBytes(srv))
	var ue *offered.UnusableError
	switch {
	case errors.As(err, &ue):
		return cacheState{State: cacheUnusable}
	case err != nil:
		return cacheState{State: cacheNone}
	}
	c := cacheState{State: cacheFresh, Tools: len(r.Tools), FetchedAt: r.FetchedAt, rec: r}
	if r.SettingsDigest != offered.SettingsDigest(srv) {
		c.State = cacheStale
	}
	return c
}

// text is the cache as a listing's column says it.
func (c cacheState) text(now time.Time) string {
	switch c.State {
	case cacheFresh:
		return fmt.Sprintf("%s, %s ago", plural(c.Tools, "tool"), age(now.Sub(c.FetchedAt)))
	case cacheStale:
		return fmt.Sprintf("stale (settings changed), %s ago", age(now.Sub(c.FetchedAt)))
	case cacheUnusable:
		return "unusable (rebuilt at the next connection)"
	}
	return "never connected"
}

// age is a duration as people say it: 40s, 5m, 3h, 2d.
func age(d time.Duration) string {
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

// cachedToolNames are the tools of srv's fresh record that pass its tools
// filter, by their MCP names; ok is false without a fresh record.
func cachedToolNames(st *offered.Store, srv *config.Server) (names []string, ok bool) {
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

// listingSource says where a listed server's tools came from: running
// (started for this listing, or by this process), or the record of its
// last connection (cachedAt in RFC 3339, cachedAge as people say it).
func listingSource(st registry.ServerStatus, now time.Time) (running bool, cachedAt, cachedAge string) {
	if st.State == registry.StateIdle && !st.Lazy.RecordAt.IsZero() {
		return false, st.Lazy.RecordAt.UTC().Format(time.RFC3339), age(now.Sub(st.Lazy.RecordAt))
	}
	return st.State == registry.StateConnected, "", ""
}

// json is the cache as 'hermes mcp list --json' reports it (nil: none).
func (c cacheState) json() *cmdkit.JSONCache {
	switch c.State {
	case cacheNone, "":
		return nil
	case cacheUnusable:
		return &cmdkit.JSONCache{State: c.State}
	}
	return &cmdkit.JSONCache{State: c.State, Tools: c.Tools, FetchedAt: c.FetchedAt.UTC().Format(time.RFC3339)}
}
