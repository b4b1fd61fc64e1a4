package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
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
	// text parts of multipart content joined by "\n".
	Text string
	// Parts are the non-text parts of multipart content, each a JSON value
	// as stored (objects for well-formed content), in order.
	Parts []json.RawMessage
	// Timestamp is when the message was written.
	Timestamp Timestamp
}

// Conversational reports whether the message is one a reader of the
// conversation sees: a user or assistant message with text. Tool and
// system messages and empty content are skipped by messages_read and by
// message events.
func (m Message) Conversational() bool {
	return (m.Role == "user" || m.Role == "assistant") && m.Text != ""
}

// Attachment is a non-text item of a message, as attachments_fetch lists
// it: {"type":"image","url"}, {"type":<part type>,"data":<part>} or
// {"type":"media","path"}.
type Attachment struct {
	Type string          `json:"type"`
	URL  string          `json:"url,omitempty"`
	Path string          `json:"path,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
}

// mediaTag finds the MEDIA: tags the agent writes into text for files it
// produced.
var mediaTag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`MEDIA:\s*(\S+)`) })

// Attachments returns the message's non-text items: images of image_url
// and image parts (with a non-empty url), other non-text parts as data,
// then a media item per MEDIA: tag in the text.
func (m Message) Attachments() []Attachment {
	out := []Attachment{}
	for _, raw := range m.Parts {
		part, ok := jsonObject(raw)
		if !ok {
			continue
		}
		ptype := jsonString(part["type"])
		switch ptype {
		case "text":
		case "image_url":
			if iu, ok := jsonObject(part["image_url"]); ok {
				if u := jsonString(iu["url"]); u != "" {
					out = append(out, Attachment{Type: "image", URL: u})
				}
			}
		case "image":
			u := ""
			if v, present := part["url"]; present {
				u = jsonString(v)
			} else if src, ok := jsonObject(part["source"]); ok {
				u = jsonString(src["url"])
			}
			if u != "" {
				out = append(out, Attachment{Type: "image", URL: u})
			}
		default:
			out = append(out, Attachment{Type: ptype, Data: append(json.RawMessage(nil), bytes.TrimSpace(raw)...)})
		}
	}
	for _, match := range mediaTag().FindAllStringSubmatch(m.Text, -1) {
		out = append(out, Attachment{Type: "media", Path: match[1]})
	}
	return out
}

// contentJSONPrefix marks structured content the agent stored as JSON
// (hermes_state._CONTENT_JSON_PREFIX).
const contentJSONPrefix = "\x00json:"

// MaxContentBytes bounds the content of one message as the store reads it:
// longer content is cut to this many bytes. The tools show far less (2000
// characters); the bound keeps one oversized row from taking the plugin's
// memory.
const MaxContentBytes = 1 << 20

// decodeContent turns a stored content value into text and non-text parts.
// Structured content is recognised by the agent's "\x00json:" prefix, and,
// for older writers, as bare JSON text that is a list of typed parts
// ([{"type": ...}, ...]). Anything else is plain text.
func decodeContent(v any) (string, []json.RawMessage) {
	s := sqlString(v)
	if rest, ok := strings.CutPrefix(s, contentJSONPrefix); ok {
		if text, parts, ok := decodeParts([]byte(rest), false); ok {
			return text, parts
		}
		return s, nil
	}
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") {
		if text, parts, ok := decodeParts([]byte(t), true); ok {
			return text, parts
		}
	}
	return s, nil
}

// decodeParts decodes multipart content. A JSON string is plain text; a
// list keeps its text parts' text joined by "\n" and returns the other
// parts; an object is a one-part list. strict accepts only a non-empty
// list of objects that each have a string "type".
func decodeParts(data []byte, strict bool) (string, []json.RawMessage, bool) {
	var list []json.RawMessage
	if err := json.Unmarshal(data, &list); err != nil {
		if strict {
			return "", nil, false
		}
		var str string
		if json.Unmarshal(data, &str) == nil {
			return str, nil, true
		}
		if _, ok := jsonObject(data); !ok {
			return "", nil, false
		}
		list = []json.RawMessage{data}
	}
	if strict {
		if len(list) == 0 {
			return "", nil, false
		}
		for _, raw := range list {
			part, ok := jsonObject(raw)
			if !ok {
				return "", nil, false
			}
			if t := bytes.TrimSpace(part["type"]); len(t) == 0 || t[0] != '"' {
				return "", nil, false
			}
		}
	}
	var texts []string
	var parts []json.RawMessage
	for _, raw := range list {
		part, ok := jsonObject(raw)
		if !ok {
			continue // neither text nor an attachment
		}
		if jsonString(part["type"]) == "text" {
			texts = append(texts, jsonString(part["text"]))
			continue
		}
		parts = append(parts, raw)
	}
	return strings.Join(texts, "\n"), parts, true
}

// messageQuery builds the SELECT of the messages table for the columns it
// has: the active filter only where the column exists (older schemas keep
// every message).
func messageQuery(cols map[string]bool, where string) string {
	// Content over MaxContentBytes is cut in SQLite, so one huge row
	// never reaches memory whole (a cut multipart value reads as text).
	content := fmt.Sprintf("CASE WHEN length(CAST(content AS BLOB)) > %[1]d THEN CAST(substr(CAST(content AS BLOB), 1, %[1]d) AS TEXT) ELSE content END", MaxContentBytes)
	q := "SELECT id, session_id, role, " + content + ", timestamp FROM messages WHERE " + where
	if cols["active"] {
		q += " AND active = 1"
	}
	return q
}

// messageColumns checks that the messages table exists with the columns the
// store reads.
func messageColumns(ctx context.Context, db queryer) (map[string]bool, error) {
	cols, err := columns(ctx, db, "messages")
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
// role included; filter with Message.Conversational for what a reader
// sees. An unknown session has no messages.
func (s *Store) Messages(ctx context.Context, sessionID string) ([]Message, error) {
	db, err := s.readDB()
	if err != nil {
		return nil, err
	}
	cols, err := messageColumns(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("messages of session %q: %w", sessionID, err)
	}
	rows, err := db.QueryContext(ctx, messageQuery(cols, "session_id = ?")+" ORDER BY id", sessionID)
	if err != nil {
		return nil, fmt.Errorf("messages of session %q: %w", sessionID, err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("messages of session %q: %w", sessionID, err)
	}
	return msgs, nil
}

// Message returns one active message of a session by id; found is false
// when the session has no such message.
func (s *Store) Message(ctx context.Context, sessionID string, id int64) (msg Message, found bool, err error) {
	db, err := s.readDB()
	if err != nil {
		return Message{}, false, err
	}
	cols, err := messageColumns(ctx, db)
	if err != nil {
		return Message{}, false, fmt.Errorf("message %d of session %q: %w", id, sessionID, err)
	}
	rows, err := db.QueryContext(ctx, messageQuery(cols, "session_id = ? AND id = ?"), sessionID, id)
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
// id greater than afterID, in id order: what a watcher reads after Changes
// reported a change. limit <= 0 means 1000.
func (s *Store) MessagesAfter(ctx context.Context, afterID int64, limit int) ([]Message, error) {
	if limit <= 0 {
		limit = 1000
	}
	db, err := s.readDB()
	if err != nil {
		return nil, err
	}
	cols, err := messageColumns(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("messages after id %d: %w", afterID, err)
	}
	rows, err := db.QueryContext(ctx, messageQuery(cols, "id > ?")+" ORDER BY id LIMIT ?", afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("messages after id %d: %w", afterID, err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("messages after id %d: %w", afterID, err)
	}
	return msgs, nil
}

func scanMessages(rows *sql.Rows) ([]Message, error) {
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var id, sessionID, role, content, ts any
		if err := rows.Scan(&id, &sessionID, &role, &content, &ts); err != nil {
			return nil, err
		}
		text, parts := decodeContent(content)
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

// Mark is a cheap summary of the database's state: when it differs between
// two calls of Changes, something was committed in between.
type Mark struct {
	// DataVersion is SQLite's PRAGMA data_version on a connection the
	// store keeps for this: it changes whenever another connection (any
	// process, or the store's own approval writes) commits.
	DataVersion int64
	// MaxMessageID is the largest messages.id, 0 for no messages.
	MaxMessageID int64
}

// Changes returns the current Mark. A watcher calls it on every file
// notification or poll tick and reads MessagesAfter and the approvals only
// when the mark moved.
func (s *Store) Changes(ctx context.Context) (Mark, error) {
	db, err := s.readDB()
	if err != nil {
		return Mark{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Mark{}, errClosed
	}
	if s.watch == nil {
		conn, err := db.Conn(ctx)
		if err != nil {
			return Mark{}, fmt.Errorf("watch %s: %w", s.dbPath, err)
		}
		s.watch = conn
	}
	var m Mark
	if err := s.watch.QueryRowContext(ctx, "PRAGMA data_version").Scan(&m.DataVersion); err != nil {
		s.watch.Close()
		s.watch = nil
		return Mark{}, fmt.Errorf("data_version of %s: %w", s.dbPath, err)
	}
	var maxID sql.NullInt64
	if err := s.watch.QueryRowContext(ctx, "SELECT MAX(id) FROM messages").Scan(&maxID); err != nil {
		return Mark{}, fmt.Errorf("last message id in %s: %w", s.dbPath, err)
	}
	m.MaxMessageID = maxID.Int64
	return m, nil
}
