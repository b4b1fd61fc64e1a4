package statedb

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
)

// TerminalSource is sessions.source of a conversation held in a terminal
// (`hermes chat`, and the original agent's CLI). Such a session has no
// session_key.
const TerminalSource = "cli"

// TerminalSessionKey is the key under which a reader shows a terminal
// session, which has no session_key of its own: the gateway's key format
// (agent:main:<platform>:<chat_type>:<chat_id>) with platform "cli", chat
// type "dm" and the session id as chat id. It is never written to the
// database.
func TerminalSessionKey(sessionID string) string {
	return "agent:main:" + TerminalSource + ":dm:" + sessionID
}

// Origin is where a conversation lives on its platform (the gateway's
// SessionSource, sessions.origin_json). ThreadID is nil when the
// conversation has no thread.
type Origin struct {
	Platform string
	ChatID   string
	ChatName string
	ChatType string
	UserID   string
	UserName string
	ThreadID *string
}

// ParseOrigin decodes an origin object; ok is false unless data is a
// non-empty JSON object. Fields of the wrong type read as empty.
func ParseOrigin(data []byte) (Origin, bool) {
	m, ok := JSONObject(data)
	if !ok || len(m) == 0 {
		return Origin{}, false
	}
	return OriginFrom(m), true
}

// OriginFrom reads an origin from a decoded JSON object.
func OriginFrom(m map[string]json.RawMessage) Origin {
	return Origin{
		Platform: JSONString(m["platform"]),
		ChatID:   JSONString(m["chat_id"]),
		ChatName: JSONString(m["chat_name"]),
		ChatType: JSONString(m["chat_type"]),
		UserID:   JSONString(m["user_id"]),
		UserName: JSONString(m["user_name"]),
		ThreadID: jsonOptString(m["thread_id"]),
	}
}

// IndexSession is one conversation of state.db's session index.
type IndexSession struct {
	// SessionKey is sessions.session_key, or TerminalSessionKey for a
	// terminal session.
	SessionKey string
	// ID is sessions.id.
	ID string
	// Source is sessions.source, the platform.
	Source      string
	ChatType    string
	DisplayName string
	// Origin is origin_json, or one made of the row's columns.
	Origin Origin
	// Terminal is true for a terminal session (no session_key).
	Terminal     bool
	StartedAt    Timestamp
	InputTokens  int64
	OutputTokens int64
	// LastActive is the latest of started_at, last_activity_at and the
	// newest message's timestamp.
	LastActive Timestamp
}

// IndexSessions lists the conversations a reader shows, most recently
// active first: the gateway sessions (rows with a session_key, the newest
// row per key, not ended), as the agent's
// SessionDB.list_gateway_sessions(active_only=True) does, and the terminal
// sessions that have not ended (source TerminalSource, no session_key, no
// parent session), under TerminalSessionKey. A schema without
// session_key (March 2026, the minimal test schema) has none: nil.
func IndexSessions(ctx context.Context, q Queryer) ([]IndexSession, error) {
	cols, err := Columns(ctx, q, "sessions")
	if err != nil {
		return nil, err
	}
	if !cols["session_key"] || !cols["id"] || !cols["started_at"] {
		return nil, nil
	}
	col := func(name string) string {
		if cols[name] {
			return "s." + name
		}
		return "NULL"
	}
	msgCols, err := Columns(ctx, q, "messages")
	if err != nil {
		return nil, err
	}
	lastMsg := "NULL"
	if msgCols["session_id"] && msgCols["timestamp"] {
		lastMsg = "(SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id)"
	}
	gateway := "(s.session_key IS NOT NULL AND s.session_key != ''" +
		" AND s.started_at = (SELECT MAX(s2.started_at) FROM sessions s2 WHERE s2.session_key = s.session_key))"
	terminal := "(COALESCE(s.session_key, '') = '' AND " + col("source") + " = '" + TerminalSource + "'"
	if cols["parent_session_id"] {
		terminal += " AND s.parent_session_id IS NULL"
	}
	terminal += ")"
	where := "(" + gateway + " OR " + terminal + ")"
	if cols["ended_at"] {
		where += " AND s.ended_at IS NULL"
	}
	query := "SELECT s.id, s.session_key, " + col("source") + ", " + col("user_id") + ", " +
		col("chat_id") + ", " + col("chat_type") + ", " + col("thread_id") + ", " +
		col("display_name") + ", " + col("origin_json") + ", " + col("title") + ", s.started_at, " +
		col("last_activity_at") + ", " + lastMsg + ", " +
		col("input_tokens") + ", " + col("output_tokens") +
		" FROM sessions s WHERE " + where
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("sessions of state.db: %w", err)
	}
	defer rows.Close()
	seen := map[string]int{}
	var out []IndexSession
	for rows.Next() {
		var id, key, source, userID, chatID, chatType, threadID, displayName, originJSON, title,
			startedAt, lastActivity, lastMessage, inTok, outTok any
		if err := rows.Scan(&id, &key, &source, &userID, &chatID, &chatType, &threadID,
			&displayName, &originJSON, &title, &startedAt, &lastActivity, &lastMessage, &inTok, &outTok); err != nil {
			return nil, fmt.Errorf("sessions of state.db: %w", err)
		}
		e := IndexSession{
			SessionKey:   sqlString(key),
			ID:           sqlString(id),
			Source:       sqlString(source),
			InputTokens:  sqlInt(inTok),
			OutputTokens: sqlInt(outTok),
		}
		if e.ID == "" {
			continue
		}
		if e.SessionKey == "" {
			e.Terminal = true
			e.SessionKey = TerminalSessionKey(e.ID)
		}
		origin, ok := ParseOrigin([]byte(sqlString(originJSON)))
		if !ok {
			origin = Origin{
				Platform: e.Source,
				ChatID:   sqlString(chatID),
				ChatType: sqlString(chatType),
				UserID:   sqlString(userID),
			}
			if threadID != nil {
				t := sqlString(threadID)
				origin.ThreadID = &t
			}
			if e.Terminal {
				origin.ChatID, origin.ChatType = e.ID, "dm"
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
		if e.DisplayName == "" && e.Terminal {
			e.DisplayName = sqlString(title)
		}
		e.StartedAt = NewTimestamp(startedAt)
		e.LastActive = latest(e.StartedAt, NewTimestamp(lastActivity), NewTimestamp(lastMessage))
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
		return nil, fmt.Errorf("sessions of state.db: %w", err)
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
