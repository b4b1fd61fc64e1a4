package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/send"
	"github.com/hermes-agent/hermes/statedb"
)

// ErrNoSession matches the error of RecordSent when no conversation of the
// session index is the chat the message went to: nothing was recorded.
var ErrNoSession = errors.New("no conversation for the chat")

// RecordSent records a message messages_send delivered as an assistant
// message of the conversation it went to, so that messages_read shows it
// and the event watcher reports it. It writes one row into state.db's
// messages table (the sent text, timestamp now in float seconds, the
// platform's id of the last part in platform_message_id, active 1, as far
// as the schema has those columns) and counts it in the session's
// message_count and last_activity_at where those columns exist, in one
// transaction that waits for the agent's writes (BusyTimeout).
//
// The conversation is the most recently active one of the session index
// (Sessions: the gateway sessions of state.db, else sessions.json) whose
// origin is res's platform and chat id and, when res names a thread, that
// thread; without a thread, a conversation without one is preferred. Its
// session must be a row of the sessions table, not ended. When there is no
// such conversation it records nothing and returns an error matching
// ErrNoSession; the message was delivered all the same. target is the
// target as the caller wrote it, for errors only.
func (s *Store) RecordSent(ctx context.Context, target, text string, res *send.Result) error {
	if res == nil || res.Platform == "" || res.ChatID == "" {
		return fmt.Errorf("record the message sent to %q: no delivery result to record; nothing was written", target)
	}
	entries, _, err := s.Sessions(ctx)
	if err != nil {
		return fmt.Errorf("record the message sent to %q: %w", target, err)
	}
	e, ok := matchSession(entries, res)
	if !ok {
		return fmt.Errorf("record the message sent to %q: %w %s in the session index; it shows in messages_read once the agent has a conversation there",
			target, ErrNoSession, chatName(res))
	}
	if err := s.insertSent(ctx, e.SessionID, text, res.MessageID()); err != nil {
		if errors.Is(err, ErrNoSession) {
			return fmt.Errorf("record the message sent to %q: %w %s: %w; it shows in messages_read once the agent has a conversation there",
				target, ErrNoSession, chatName(res), errors.Unwrap(err))
		}
		return fmt.Errorf("record the message sent to %q in session %q: %w", target, e.SessionID, err)
	}
	return nil
}

// chatName names res's chat in errors: "telegram:123" or
// "slack:C1:1712.1".
func chatName(res *send.Result) string {
	n := res.Platform + ":" + res.ChatID
	if res.ThreadID != "" {
		n += ":" + res.ThreadID
	}
	return n
}

// matchSession picks the conversation of entries (most recently active
// first) that res was delivered to.
func matchSession(entries []Entry, res *send.Result) (Entry, bool) {
	var fallback *Entry
	for i, e := range entries {
		p := e.Platform
		if p == "" {
			p = e.Origin.Platform
		}
		if e.SessionID == "" || !strings.EqualFold(p, res.Platform) || e.Origin.ChatID != res.ChatID {
			continue
		}
		thread := ""
		if e.Origin.ThreadID != nil {
			thread = *e.Origin.ThreadID
		}
		if res.ThreadID != "" {
			if thread == res.ThreadID {
				return e, true
			}
			continue
		}
		if thread == "" {
			return e, true
		}
		if fallback == nil {
			fallback = &entries[i]
		}
	}
	if fallback != nil {
		return *fallback, true
	}
	return Entry{}, false
}

// noSession is the error of insertSent when the conversation's session
// cannot take the message; it matches ErrNoSession, and Unwrap returns the
// reason.
type noSession struct{ reason error }

func (e *noSession) Error() string        { return e.reason.Error() }
func (e *noSession) Unwrap() error        { return e.reason }
func (e *noSession) Is(target error) bool { return target == ErrNoSession }

// insertSent writes the message row and the session's counters in one
// BEGIN IMMEDIATE transaction.
func (s *Store) insertSent(ctx context.Context, sessionID, text, platformID string) error {
	db, err := s.writeDB()
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("write %s: %w", s.dbPath, err)
	}
	defer tx.Rollback()
	msgCols, err := statedb.MessageColumns(ctx, tx)
	if err != nil {
		return err
	}
	sesCols, err := columns(ctx, tx, "sessions")
	if err != nil {
		return err
	}
	if !sesCols["id"] {
		return &noSession{fmt.Errorf("state.db has no sessions table")}
	}
	ended := "NULL"
	if sesCols["ended_at"] {
		ended = "ended_at"
	}
	var endedAt any
	if err := tx.QueryRowContext(ctx, "SELECT "+ended+" FROM sessions WHERE id = ?", sessionID).Scan(&endedAt); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return &noSession{fmt.Errorf("session %q is not a row of the sessions table", sessionID)}
		}
		return fmt.Errorf("read session %q: %w", sessionID, err)
	}
	if endedAt != nil {
		return &noSession{fmt.Errorf("session %q has ended", sessionID)}
	}

	now := float64(time.Now().UnixNano()) / 1e9
	names := []string{"session_id", "role", "content", "timestamp"}
	values := []any{sessionID, "assistant", text, now}
	if msgCols["platform_message_id"] && platformID != "" {
		names, values = append(names, "platform_message_id"), append(values, platformID)
	}
	if msgCols["active"] {
		names, values = append(names, "active"), append(values, 1)
	}
	insert := "INSERT INTO messages (" + strings.Join(names, ", ") + ") VALUES (?" + strings.Repeat(", ?", len(names)-1) + ")"
	if _, err := tx.ExecContext(ctx, insert, values...); err != nil {
		return fmt.Errorf("insert the message: %w", err)
	}
	var set []string
	var args []any
	if sesCols["message_count"] {
		set = append(set, "message_count = COALESCE(message_count, 0) + 1")
	}
	if sesCols["last_activity_at"] {
		set, args = append(set, "last_activity_at = ?"), append(args, now)
	}
	if len(set) > 0 {
		args = append(args, sessionID)
		if _, err := tx.ExecContext(ctx, "UPDATE sessions SET "+strings.Join(set, ", ")+" WHERE id = ?", args...); err != nil {
			return fmt.Errorf("count the message in its session: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit to %s: %w", s.dbPath, err)
	}
	return nil
}
