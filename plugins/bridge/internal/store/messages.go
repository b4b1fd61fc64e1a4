package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"

	"github.com/hermes-agent/hermes/statedb"
)

// Message is one row of the messages table with its content decoded
// (statedb.Message).
type Message = statedb.Message

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

// Attachments returns the non-text items of m: images of image_url and
// image parts (with a non-empty url), other non-text parts as data, then a
// media item per MEDIA: tag in the text.
func Attachments(m Message) []Attachment {
	out := []Attachment{}
	for _, raw := range m.Parts {
		part, ok := statedb.JSONObject(raw)
		if !ok {
			continue
		}
		ptype := statedb.JSONString(part["type"])
		switch ptype {
		case "text":
		case "image_url":
			if iu, ok := statedb.JSONObject(part["image_url"]); ok {
				if u := statedb.JSONString(iu["url"]); u != "" {
					out = append(out, Attachment{Type: "image", URL: u})
				}
			}
		case "image":
			u := ""
			if v, present := part["url"]; present {
				u = statedb.JSONString(v)
			} else if src, ok := statedb.JSONObject(part["source"]); ok {
				u = statedb.JSONString(src["url"])
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

// MaxContentBytes bounds the content of one message as the store reads it
// (statedb.MaxContentBytes): longer content is cut to this many bytes.
const MaxContentBytes = statedb.MaxContentBytes

// Messages returns the active messages of one session in id order, every
// role included; filter with Message.Conversational for what a reader
// sees. An unknown session has no messages.
func (s *Store) Messages(ctx context.Context, sessionID string) ([]Message, error) {
	db, err := s.readDB()
	if err != nil {
		return nil, err
	}
	return statedb.Messages(ctx, db, sessionID)
}

// Message returns one active message of a session by id; found is false
// when the session has no such message.
func (s *Store) Message(ctx context.Context, sessionID string, id int64) (msg Message, found bool, err error) {
	db, err := s.readDB()
	if err != nil {
		return Message{}, false, err
	}
	return statedb.MessageByID(ctx, db, sessionID, id)
}

// MessagesAfter returns up to limit active messages of any session with an
// id greater than afterID, in id order: what a watcher reads after Changes
// reported a change. limit <= 0 means 1000.
func (s *Store) MessagesAfter(ctx context.Context, afterID int64, limit int) ([]Message, error) {
	db, err := s.readDB()
	if err != nil {
		return nil, err
	}
	return statedb.MessagesAfter(ctx, db, afterID, limit)
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
	maxID, err := statedb.MaxMessageID(ctx, s.watch)
	if err != nil {
		return Mark{}, fmt.Errorf("%s: %w", s.dbPath, err)
	}
	m.MaxMessageID = maxID
	return m, nil
}
