package events

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// Feed is a Watcher as the bridge's event tools use it (the tools package's
// Events interface): each event one JSON object, as MarshalJSON writes it.
// A Feed with a nil Watcher has no events.
type Feed struct {
	W *Watcher
}

// Poll returns up to limit events with a cursor greater than after, of
// session sessionKey when it is not "", oldest first, as JSON, and the
// cursor of the last one (after when there is none).
func (f Feed) Poll(after int64, sessionKey string, limit int) ([]json.RawMessage, int64) {
	if f.W == nil {
		return []json.RawMessage{}, after
	}
	evs, next := f.W.Poll(after, sessionKey, limit)
	out := make([]json.RawMessage, len(evs))
	for i, e := range evs {
		out[i] = e.JSON()
	}
	return out, next
}

// Wait returns the first event after after (of sessionKey when it is not
// ""), as JSON, waiting up to timeout; nil and a nil error when the timeout
// passed. It returns ctx's error when ctx ends first and ErrClosed once the
// watcher is closed.
func (f Feed) Wait(ctx context.Context, after int64, sessionKey string, timeout time.Duration) (json.RawMessage, error) {
	if f.W == nil {
		return nil, ctx.Err()
	}
	e, err := f.W.Wait(ctx, after, sessionKey, timeout)
	if err != nil || e == nil {
		return nil, err
	}
	return e.JSON(), nil
}

// MarshalJSON writes the event as the original bridge did: "cursor",
// "type" and "session_key", then the fields of its type, every one of
// them even when empty, in this order: role, content, timestamp and
// message_id for a message; approval_id, kind and description for an
// approval_requested; approval_id and decision for an approval_resolved.
// An event of another type carries its non-empty fields in the order of
// the struct.
func (e Event) MarshalJSON() ([]byte, error) {
	return e.JSON(), nil
}

// JSON returns the event's JSON object, as MarshalJSON does.
func (e Event) JSON() json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"cursor":`)
	b.WriteString(strconv.FormatInt(e.Cursor, 10))
	field(&b, "type", e.Type)
	field(&b, "session_key", e.SessionKey)
	switch e.Type {
	case TypeMessage:
		field(&b, "role", e.Role)
		field(&b, "content", e.Content)
		field(&b, "timestamp", e.Timestamp)
		field(&b, "message_id", e.MessageID)
	case TypeApprovalRequested:
		field(&b, "approval_id", e.ApprovalID)
		field(&b, "kind", e.Kind)
		field(&b, "description", e.Description)
	case TypeApprovalResolved:
		field(&b, "approval_id", e.ApprovalID)
		field(&b, "decision", e.Decision)
	default:
		for _, f := range []struct{ name, value string }{
			{"role", e.Role}, {"content", e.Content}, {"timestamp", e.Timestamp}, {"message_id", e.MessageID},
			{"approval_id", e.ApprovalID}, {"kind", e.Kind}, {"description", e.Description}, {"decision", e.Decision},
		} {
			if f.value != "" {
				field(&b, f.name, f.value)
			}
		}
	}
	b.WriteByte('}')
	return json.RawMessage(b.Bytes())
}

// field writes `,"name":"value"`.
func field(b *bytes.Buffer, name, value string) {
	b.WriteString(`,"`)
	b.WriteString(name)
	b.WriteString(`":`)
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(value)       // a string always encodes; invalid UTF-8 becomes U+FFFD
	b.Truncate(b.Len() - 1) // Encode's newline
}
