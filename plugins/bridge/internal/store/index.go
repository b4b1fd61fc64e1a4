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
)

// MaxIndexFileSize bounds sessions/sessions.json: a larger file is refused
// rather than read into memory.
const MaxIndexFileSize = 16 << 20

// Origin is where a conversation lives on its platform (the gateway's
// SessionSource). Nil pointers are JSON nulls or absent values.
type Origin struct {
	Platform string
	ChatID   string
	ChatName string
	ChatType string
	UserID   string
	UserName string
	// ThreadID is nil when the conversation has no thread.
	ThreadID *string
}

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

// sessionsFromDB lists the gateway sessions of state.db, as the agent's
// SessionDB.list_gateway_sessions(active_only=True) does.
func (s *Store) sessionsFromDB(ctx context.Context) ([]Entry, error) {
	db, err := s.readDB()
	if err != nil {
		return nil, err
	}
	cols, err := columns(ctx, db, "sessions")
	if err != nil {
		return nil, err
	}
	if !cols["session_key"] || !cols["id"] || !cols["started_at"] {
		return nil, nil // a schema from before gateway rows: use sessions.json
	}
	col := func(name string) string {
		if cols[name] {
			return "s." + name
		}
		return "NULL"
	}
	msgCols, err := columns(ctx, db, "messages")
	if err != nil {
		return nil, err
	}
	lastMsg := "NULL"
	if msgCols["session_id"] && msgCols["timestamp"] {
		lastMsg = "(SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id)"
	}
	where := "s.session_key IS NOT NULL AND s.session_key != ''" +
		" AND s.started_at = (SELECT MAX(s2.started_at) FROM sessions s2 WHERE s2.session_key = s.session_key)"
	if cols["ended_at"] {
		where += " AND s.ended_at IS NULL"
	}
	query := "SELECT s.id, s.session_key, " + col("source") + ", " + col("user_id") + ", " +
		col("chat_id") + ", " + col("chat_type") + ", " + col("thread_id") + ", " +
		col("display_name") + ", " + col("origin_json") + ", s.started_at, " +
		col("last_activity_at") + ", " + lastMsg + ", " +
		col("input_tokens") + ", " + col("output_tokens") +
		" FROM sessions s WHERE " + where
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("gateway sessions of %s: %w", s.dbPath, err)
	}
	defer rows.Close()
	seen := map[string]int{}
	var out []Entry
	for rows.Next() {
		var id, key, source, userID, chatID, chatType, threadID, displayName, originJSON,
			startedAt, lastActivity, lastMessage, inTok, outTok any
		if err := rows.Scan(&id, &key, &source, &userID, &chatID, &chatType, &threadID,
			&displayName, &originJSON, &startedAt, &lastActivity, &lastMessage, &inTok, &outTok); err != nil {
			return nil, fmt.Errorf("gateway sessions of %s: %w", s.dbPath, err)
		}
		e := Entry{
			SessionKey:   sqlString(key),
			SessionID:    sqlString(id),
			Platform:     sqlString(source),
			InputTokens:  sqlInt(inTok),
			OutputTokens: sqlInt(outTok),
		}
		if e.SessionKey == "" {
			continue
		}
		e.TotalTokens = e.InputTokens + e.OutputTokens
		origin, ok := parseOrigin([]byte(sqlString(originJSON)))
		if !ok {
			origin = Origin{
				Platform: e.Platform,
				ChatID:   sqlString(chatID),
				ChatType: sqlString(chatType),
				UserID:   sqlString(userID),
			}
			if threadID != nil {
				t := sqlString(threadID)
				origin.ThreadID = &t
			}
		}
		e.Origin = origin
		e.ChatType = sqlString(chatType)
		if e.ChatType == "" {
			e.ChatType = origin.ChatType
		}
		e.DisplayName = sqlString(displayName)
		if e.DisplayName == "" {
			e.DisplayName = origin.ChatName
		}
		started := NewTimestamp(startedAt)
		e.CreatedAt = started.ISO()
		e.LastActive = latest(started, NewTimestamp(lastActivity), NewTimestamp(lastMessage))
		e.UpdatedAt = e.LastActive.ISO()
		// Two rows of one key with the same started_at: keep the one
		// active last.
		if i, dup := seen[e.SessionKey]; dup {
			if e.LastActive.Time.After(out[i].LastActive.Time) {
				out[i] = e
			}
			continue
		}
		seen[e.SessionKey] = len(out)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("gateway sessions of %s: %w", s.dbPath, err)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].LastActive.Time.After(out[j].LastActive.Time)
	})
	return out, nil
}

// latest returns the latest of the known timestamps, the first when none is
// known.
func latest(first Timestamp, others ...Timestamp) Timestamp {
	best := first
	for _, t := range others {
		if !t.Time.IsZero() && (best.Time.IsZero() || t.Time.After(best.Time)) {
			best = t
		}
	}
	return best
}

// parseOrigin decodes an origin object; ok is false unless data is a
// non-empty JSON object.
func parseOrigin(data []byte) (Origin, bool) {
	m, ok := jsonObject(data)
	if !ok || len(m) == 0 {
		return Origin{}, false
	}
	return originFrom(m), true
}

func originFrom(m map[string]json.RawMessage) Origin {
	return Origin{
		Platform: jsonString(m["platform"]),
		ChatID:   jsonString(m["chat_id"]),
		ChatName: jsonString(m["chat_name"]),
		ChatType: jsonString(m["chat_type"]),
		UserID:   jsonString(m["user_id"]),
		UserName: jsonString(m["user_name"]),
		ThreadID: jsonOptString(m["thread_id"]),
	}
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
		m, ok := jsonObject(raw)
		if !ok {
			continue
		}
		e := Entry{
			SessionKey:   key, // the routing key entries are looked up by
			SessionID:    jsonString(m["session_id"]),
			Platform:     jsonString(m["platform"]),
			ChatType:     jsonString(m["chat_type"]),
			DisplayName:  jsonString(m["display_name"]),
			CreatedAt:    jsonString(m["created_at"]),
			UpdatedAt:    jsonString(m["updated_at"]),
			InputTokens:  jsonInt(m["input_tokens"]),
			OutputTokens: jsonInt(m["output_tokens"]),
			TotalTokens:  jsonInt(m["total_tokens"]),
		}
		if om, ok := jsonObject(m["origin"]); ok {
			e.Origin = originFrom(om)
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
