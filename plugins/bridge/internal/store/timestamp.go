package store

import "github.com/hermes-agent/hermes/statedb"

// Timestamp is a time as the agent stored it (statedb.Timestamp): float
// seconds, integer seconds or ISO 8601 text, with its parsed value.
type Timestamp = statedb.Timestamp

// NewTimestamp parses a scanned column value or a sessions.json text into
// a Timestamp.
func NewTimestamp(v any) Timestamp { return statedb.NewTimestamp(v) }
