package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hermes-agent/hermes/statedb"
)

// MaxIndexFileSize bounds sessions/sessions.json: a larger file is refused
// rather than read into memory.
const MaxIndexFileSize = 16 << 20

// Origin is where a conversation lives on its platform (the gateway's
// SessionSource, statedb.Origin). Nil pointers are JSON nulls or absent
// values.
type Origin = statedb.Origin

// Entry is one conversation of the session index, in the shape of a
// sessions.json entry, whichever source it came from.
type Entry struct {
	SessionKey  string
	SessionID   string
	Platform    string
	ChatType    string
	DisplayName string
	Origin      Origin
	// CreatedAt and UpdatedAt are ISO 8601 text as sessions.json holds
	// them (local time, no zone); "" when unknown.
	CreatedAt    string
	UpdatedAt    string
	InputTokens  int64
	OutputTokens int64
	TotalTokens  int64
	// LastActive is the time of the latest activity, for sorting; zero
	// when unknown.
	LastActive Timestamp
	// Terminal is true for a conversation held in a terminal (`hermes
	// chat`): it has no session_key of its own and is listed under
	// statedb.TerminalSessionKey; nothing can be sent to it.
	Terminal bool
}

// IndexSource says where Sessions found the conversations.
type IndexSource string

// The sources of the session index.
const (
	SourceDB   IndexSource = "state.db"
	SourceJSON IndexSource = "sessions.json"
	SourceNone IndexSource = ""
)

// Sessions returns the conversations of the session index, most recently
// active first: the gateway sessions of state.db (rows with a session_key,
// the newest row per key, not ended), or, when that yields none (no
// state.db, a schema without session_key, no gateway rows), the entries of
// sessions/sessions.json. A state.db that cannot be read falls back too;
// its error is returned only when sessions.json does not help either.
func (s *Store) Sessions(ctx context.Context) ([]Entry, IndexSource, error) {
	entries, dbErr := s.sessionsFromDB(ctx)
	if dbErr == nil && len(entries) > 0 {
		return entries, SourceDB, nil
	}
	if errors.Is(dbErr, ErrNoDatabase) {
		dbErr = nil
	}
	entries, err := s.sessionsFromJSON()
	if err != nil {
		return nil, SourceNone, errors.Join(dbErr, err)
	}
	if len(entries) > 0 {
		return entries, SourceJSON, nil
	}
	return nil, SourceNone, dbErr
}

// Session returns the conversation with the session key key from the
// index; found is false when there is none.
func (s *Store) Session(ctx context.Context, key string) (Entry, bool, error) {
	entries, _, err := s.Sessions(ctx)
	if err != nil {
		return Entry{}, false, err
	}
	for _, e := range entries {
		if e.SessionKey == key {
			return e, true, nil
		}
	}
	return Entry{}, false, nil
}

// sessionsFromDB lists the conversations of state.db (statedb.IndexSessions):
// the gateway sessions, as the agent's
// SessionDB.list_gateway_sessions(active_only=True) does, and the terminal
// sessions that have not ended.
func (s *Store) sessionsFromDB(ctx context.Context) ([]Entry, error) {
	db, err := s.readDB()
	if err != nil {
		return nil, err
	}
	rows, err := statedb.IndexSessions(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.dbPath, err)
	}
	out := make([]Entry, 0, len(rows))
	for _, r := range rows {
		out = append(out, Entry{
			SessionKey:   r.SessionKey,
			SessionID:    r.ID,
			Platform:     r.Source,
			ChatType:     r.ChatType,
			DisplayName:  r.DisplayName,
			Origin:       r.Origin,
			CreatedAt:    r.StartedAt.ISO(),
			UpdatedAt:    r.LastActive.ISO(),
			InputTokens:  r.InputTokens,
			OutputTokens: r.OutputTokens,
			TotalTokens:  r.InputTokens + r.OutputTokens,
			LastActive:   r.LastActive,
			Terminal:     r.Terminal,
		})
	}
	return out, nil
}

// sessionsFromJSON reads sessions/sessions.json; a missing file is no
// sessions.
func (s *Store) sessionsFromJSON() ([]Entry, error) {
	path := filepath.Join(s.home, filepath.FromSlash(IndexFile))
	data, err := readBounded(path, MaxIndexFileSize, "MaxIndexFileSize")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	entries, err := ParseIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, nil
}

// ParseIndex parses the content of a sessions.json file: a JSON object
// mapping session keys to entries. Keys starting with "_" are metadata and
// dropped, as are values that are not objects; a field of the wrong type
// reads as empty. The entries are sorted by updated_at, newest first, then
// by key. Data larger than MaxIndexFileSize is refused.
func ParseIndex(data []byte) ([]Entry, error) {
	if len(data) > MaxIndexFileSize {
		return nil, fmt.Errorf("session index of %d bytes is larger than MaxIndexFileSize (%d bytes); remove stale sessions from it", len(data), MaxIndexFileSize)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("session index is not a JSON object: %w; fix or delete the file, the gateway rewrites it", err)
	}
	out := make([]Entry, 0, len(top))
	for key, raw := range top {
		if strings.HasPrefix(key, "_") {
			continue
		}
		m, ok := statedb.JSONObject(raw)
		if !ok {
			continue
		}
		e := Entry{
			SessionKey:   key, // the routing key entries are looked up by
			SessionID:    statedb.JSONString(m["session_id"]),
			Platform:     statedb.JSONString(m["platform"]),
			ChatType:     statedb.JSONString(m["chat_type"]),
			DisplayName:  statedb.JSONString(m["display_name"]),
			CreatedAt:    statedb.JSONString(m["created_at"]),
			UpdatedAt:    statedb.JSONString(m["updated_at"]),
			InputTokens:  statedb.JSONInt(m["input_tokens"]),
			OutputTokens: statedb.JSONInt(m["output_tokens"]),
			TotalTokens:  statedb.JSONInt(m["total_tokens"]),
		}
		if om, ok := statedb.JSONObject(m["origin"]); ok {
			e.Origin = statedb.OriginFrom(om)
		}
		e.LastActive = NewTimestamp(e.UpdatedAt)
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].UpdatedAt != out[j].UpdatedAt {
			return out[i].UpdatedAt > out[j].UpdatedAt
		}
		return out[i].SessionKey < out[j].SessionKey
	})
	return out, nil
}

// readBounded reads a regular file of at most limit bytes. A missing file
// is an error matching fs.ErrNotExist.
func readBounded(path string, limit int64, limitName string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file; replace it with the file the gateway writes", path)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, larger than %s (%d bytes); trim or delete it", path, fi.Size(), limitName, limit)
	}
	// The file may grow between Stat and Read: read one byte past the limit
	// to notice.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %s (%d bytes); trim or delete it", path, limitName, limit)
	}
	return data, nil
}
