package statedb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Message is one row of the messages table with its content decoded.
type Message struct {
	// ID is the row id (messages.id), increasing in insertion order.
	ID int64
	// SessionID is the session the message belongs to (sessions.id).
	SessionID string
	// Role is user, assistant, tool or system.
	Role string
	// Text is the text of the message: plain content as stored, or the
	// text parts of multipart content joined by "\n" (DecodeContent).
	Text string
	// Parts are the non-text parts of multipart content, each a JSON value
	// as stored (objects for well-formed content), in order.
	Parts []json.RawMessage
	// Timestamp is when the message was written.
	Timestamp Timestamp
}

// Conversational reports whether the message is one a reader of the
// conversation sees: a user or assistant message with text. Tool and
// system messages and empty content are not.
func (m Message) Conversational() bool {
	return (m.Role == "user" || m.Role == "assistant") && m.Text != ""
}

// messageQuery builds the SELECT of the messages table for the columns it
// has: the active filter only where the column exists (older schemas keep
// every message).
func messageQuery(cols map[string]bool, where string) string {
	content := fmt.Sprintf("CASE WHEN length(CAST(content AS BLOB)) > %[1]d THEN CAST(substr(CAST(content AS BLOB), 1, %[1]d) AS TEXT) ELSE content END", MaxContentBytes)
	q := "SELECT id, session_id, role, " + content + ", timestamp FROM messages WHERE " + where
	if cols["active"] {
		q += " AND active = 1"
	}
	return q
}

// MessageColumns checks that the messages table exists with the columns
// the readers need, and returns its columns.
func MessageColumns(ctx context.Context, q Queryer) (map[string]bool, error) {
	cols, err := Columns(ctx, q, "messages")
	if err != nil {
		return nil, err
	}
	for _, c := range []string{"id", "session_id", "role", "content", "timestamp"} {
		if !cols[c] {
			return nil, fmt.Errorf("state.db has no messages.%s column; is it an agent session database?", c)
		}
	}
	return cols, nil
}

// Messages returns the active messages of one session in id order, every
// role included. An unknown session has no messages.
func Messages(ctx context.Context, q Queryer, sessionID string) ([]Message, error) {
	cols, err := MessageColumns(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("messages of session %q: %w", sessionID, err)
	}
	rows, err := q.QueryContext(ctx, messageQuery(cols, "session_id = ?")+" ORDER BY id", sessionID)
	if err != nil {
		return nil, fmt.Errorf("messages of session %q: %w", sessionID, err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("messages of session %q: %w", sessionID, err)
	}
	return msgs, nil
}

// MessageByID returns one active message of a session; found is false when
// the session has no such message.
func MessageByID(ctx context.Context, q Queryer, sessionID string, id int64) (msg Message, found bool, err error) {
	cols, err := MessageColumns(ctx, q)
	if err != nil {
		return Message{}, false, fmt.Errorf("message %d of session %q: %w", id, sessionID, err)
	}
	rows, err := q.QueryContext(ctx, messageQuery(cols, "session_id = ? AND id = ?"), sessionID, id)
	if err != nil {
		return Message{}, false, fmt.Errorf("message %d of session %q: %w", id, sessionID, err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return Message{}, false, fmt.Errorf("message %d of session %q: %w", id, sessionID, err)
	}
	if len(msgs) == 0 {
		return Message{}, false, nil
	}
	return msgs[0], true, nil
}

// MessagesAfter returns up to limit active messages of any session with an
// id greater than afterID, in id order. limit <= 0 means 1000.
func MessagesAfter(ctx context.Context, q Queryer, afterID int64, limit int) ([]Message, error) {
	if limit <= 0 {
		limit = 1000
	}
	cols, err := MessageColumns(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("messages after id %d: %w", afterID, err)
	}
	rows, err := q.QueryContext(ctx, messageQuery(cols, "id > ?")+" ORDER BY id LIMIT ?", afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("messages after id %d: %w", afterID, err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("messages after id %d: %w", afterID, err)
	}
	return msgs, nil
}

// MaxMessageID returns the largest messages.id, 0 when there are none.
func MaxMessageID(ctx context.Context, q Queryer) (int64, error) {
	var maxID sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT MAX(id) FROM messages").Scan(&maxID); err != nil {
		return 0, fmt.Errorf("last message id: %w", err)
	}
	return maxID.Int64, nil
}

func scanMessages(rows *sql.Rows) ([]Message, error) {
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var id, sessionID, role, content, ts any
		if err := rows.Scan(&id, &sessionID, &role, &content, &ts); err != nil {
			return nil, err
		}
		text, parts := DecodeContent(content)
		out = append(out, Message{
			ID:        sqlInt(id),
			SessionID: sqlString(sessionID),
			Role:      sqlString(role),
			Text:      text,
			Parts:     parts,
			Timestamp: NewTimestamp(ts),
		})
	}
	return out, rows.Err()
}
