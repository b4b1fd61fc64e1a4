package statedb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Writer writes conversations to one state.db: the host's side. Its
// methods are safe for concurrent use; every write is one short BEGIN
// IMMEDIATE transaction, so a concurrent reader (the bridge) sees a
// message and its session's counts together or not at all.
type Writer struct {
	path string
	db   *sql.DB

	mu   sync.Mutex
	cols map[string]map[string]bool // table → columns, read once
}

// OpenWriter opens path for writing, creating it (mode 0600: it holds
// conversations) and its schema (CreateSchema) when missing, in WAL mode.
func OpenWriter(ctx context.Context, path string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("session database %s: %w", path, err)
	}
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, fmt.Errorf("session database %s: %w", path, err)
	} else {
		f.Close()
	}
	if err := CheckFile(path); err != nil {
		return nil, err
	}
	db, err := sql.Open(DriverName, DSN(path, Create))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	w := &Writer{path: path, db: db, cols: map[string]map[string]bool{}}
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w; is it an SQLite database? move it aside and hermes creates a new one", path, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer tx.Rollback()
	if err := CreateSchema(ctx, tx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := tx.Commit(); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// Path returns the database file.
func (w *Writer) Path() string { return w.path }

// DB returns the writer's connection (one, transactions IMMEDIATE), for
// CreateApproval, Respond and the grants.
func (w *Writer) DB() *sql.DB { return w.db }

// Close closes the connection.
func (w *Writer) Close() error { return w.db.Close() }

func (w *Writer) columns(ctx context.Context, tx *sql.Tx, table string) (map[string]bool, error) {
	w.mu.Lock()
	cols := w.cols[table]
	w.mu.Unlock()
	if cols != nil {
		return cols, nil
	}
	cols, err := Columns(ctx, tx, table)
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("state.db %s has no %s table; move it aside and hermes creates a new one", w.path, table)
	}
	w.mu.Lock()
	w.cols[table] = cols
	w.mu.Unlock()
	return cols, nil
}

// insert writes one row with the values whose columns the table has.
func insert(ctx context.Context, tx *sql.Tx, table string, cols map[string]bool, values [][2]any) (sql.Result, error) {
	var names []string
	var args []any
	for _, kv := range values {
		name := kv[0].(string)
		if cols[name] {
			names, args = append(names, name), append(args, kv[1])
		}
	}
	return tx.ExecContext(ctx, "INSERT INTO "+table+" ("+strings.Join(names, ", ")+") VALUES (?"+strings.Repeat(", ?", len(names)-1)+")", args...)
}

// Session is a new conversation.
type Session struct {
	// ID is the session id; empty gets a new one (NewSessionID).
	ID string
	// Source is the platform: TerminalSource for a terminal.
	Source string
	// SessionKey is the gateway's routing key; empty for a terminal
	// session (readers show it under TerminalSessionKey).
	SessionKey string
	Model      string
	// Title, SystemPrompt and Cwd are optional.
	Title        string
	SystemPrompt string
	Cwd          string
	// StartedAt zero is now.
	StartedAt time.Time
}

// NewSessionID returns a session id in the agent's form:
// 20260329_120000_abc123 (local time, six random hex digits).
func NewSessionID(now time.Time) (string, error) {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new session id: %w", err)
	}
	return now.Format("20060102_150405") + "_" + hex.EncodeToString(b[:]), nil
}

// CreateSession records a new session and returns it with its id and
// start time.
func (w *Writer) CreateSession(ctx context.Context, s Session) (Session, error) {
	if s.StartedAt.IsZero() {
		s.StartedAt = time.Now()
	}
	if s.ID == "" {
		id, err := NewSessionID(s.StartedAt)
		if err != nil {
			return Session{}, err
		}
		s.ID = id
	}
	if s.Source == "" {
		s.Source = TerminalSource
	}
	err := w.tx(ctx, func(tx *sql.Tx) error {
		cols, err := w.columns(ctx, tx, "sessions")
		if err != nil {
			return err
		}
		vals := [][2]any{{"id", s.ID}, {"source", s.Source}, {"started_at", UnixSeconds(s.StartedAt)}, {"message_count", 0}}
		opt := func(name, v string) {
			if v != "" {
				vals = append(vals, [2]any{name, v})
			}
		}
		opt("session_key", s.SessionKey)
		opt("model", s.Model)
		opt("title", s.Title)
		opt("system_prompt", s.SystemPrompt)
		opt("cwd", s.Cwd)
		_, err = insert(ctx, tx, "sessions", cols, vals)
		return err
	})
	if err != nil {
		return Session{}, fmt.Errorf("create session %q in %s: %w", s.ID, w.path, err)
	}
	return s, nil
}

// ToolCall is one tool call of an assistant message, in the
// chat-completions form the agent stores in messages.tool_calls.
type ToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function ToolCallFunction `json:"function"`
}

// ToolCallFunction is the function of a ToolCall: its model-visible name
// and its arguments as JSON text.
type ToolCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// NewMessage is a message to append.
type NewMessage struct {
	// Role is user, assistant, tool or system.
	Role string
	// Content is the stored content: EncodeText or EncodeParts.
	Content string
	// ToolCalls are an assistant message's tool calls.
	ToolCalls []ToolCall
	// ToolCallID and ToolName belong to a tool result (role tool).
	ToolCallID string
	ToolName   string
	// FinishReason, TokenCount and Reasoning are optional.
	FinishReason string
	TokenCount   int64
	Reasoning    string
	// Timestamp zero is now.
	Timestamp time.Time
}

// ErrSessionEnded matches AppendMessage to a session that has ended or
// does not exist.
var ErrSessionEnded = errors.New("session not open")

// AppendMessage adds m to session sessionID and counts it (message_count,
// tool_call_count, last_activity_at where the column exists) in one
// transaction. It returns the message's id.
func (w *Writer) AppendMessage(ctx context.Context, sessionID string, m NewMessage) (int64, error) {
	if m.Role == "" {
		return 0, fmt.Errorf("append a message to session %q: no role", sessionID)
	}
	if m.Timestamp.IsZero() {
		m.Timestamp = time.Now()
	}
	ts := UnixSeconds(m.Timestamp)
	var toolCalls any
	if len(m.ToolCalls) > 0 {
		data, err := json.Marshal(m.ToolCalls)
		if err != nil {
			return 0, fmt.Errorf("append a message to session %q: %w", sessionID, err)
		}
		toolCalls = string(data)
	}
	var id int64
	err := w.tx(ctx, func(tx *sql.Tx) error {
		sesCols, err := w.columns(ctx, tx, "sessions")
		if err != nil {
			return err
		}
		msgCols, err := w.columns(ctx, tx, "messages")
		if err != nil {
			return err
		}
		ended := "NULL"
		if sesCols["ended_at"] {
			ended = "ended_at"
		}
		var endedAt any
		if err := tx.QueryRowContext(ctx, "SELECT "+ended+" FROM sessions WHERE id = ?", sessionID).Scan(&endedAt); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: no such session", ErrSessionEnded)
			}
			return err
		}
		if endedAt != nil {
			return fmt.Errorf("%w: it has ended", ErrSessionEnded)
		}
		vals := [][2]any{{"session_id", sessionID}, {"role", m.Role}, {"content", m.Content}, {"timestamp", ts}, {"active", 1}}
		if toolCalls != nil {
			vals = append(vals, [2]any{"tool_calls", toolCalls})
		}
		for _, kv := range [][2]string{{"tool_call_id", m.ToolCallID}, {"tool_name", m.ToolName}, {"finish_reason", m.FinishReason}, {"reasoning", m.Reasoning}} {
			if kv[1] != "" {
				vals = append(vals, [2]any{kv[0], kv[1]})
			}
		}
		if m.TokenCount > 0 {
			vals = append(vals, [2]any{"token_count", m.TokenCount})
		}
		res, err := insert(ctx, tx, "messages", msgCols, vals)
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		var set []string
		var args []any
		if sesCols["message_count"] {
			set = append(set, "message_count = COALESCE(message_count, 0) + 1")
		}
		if sesCols["tool_call_count"] && len(m.ToolCalls) > 0 {
			set, args = append(set, "tool_call_count = COALESCE(tool_call_count, 0) + ?"), append(args, len(m.ToolCalls))
		}
		if sesCols["last_activity_at"] {
			set, args = append(set, "last_activity_at = ?"), append(args, ts)
		}
		if len(set) > 0 {
			args = append(args, sessionID)
			if _, err := tx.ExecContext(ctx, "UPDATE sessions SET "+strings.Join(set, ", ")+" WHERE id = ?", args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("append a %s message to session %q in %s: %w", m.Role, sessionID, w.path, err)
	}
	return id, nil
}

// Usage is what one or more model calls cost; AddUsage adds it to a
// session's counters.
type Usage struct {
	InputTokens      int64
	OutputTokens     int64
	CacheReadTokens  int64
	CacheWriteTokens int64
	ReasoningTokens  int64
	APICalls         int64
}

// AddUsage adds u to session sessionID's token and call counters (those
// its schema has).
func (w *Writer) AddUsage(ctx context.Context, sessionID string, u Usage) error {
	err := w.tx(ctx, func(tx *sql.Tx) error {
		cols, err := w.columns(ctx, tx, "sessions")
		if err != nil {
			return err
		}
		var set []string
		var args []any
		for _, kv := range []struct {
			col string
			n   int64
		}{{"input_tokens", u.InputTokens}, {"output_tokens", u.OutputTokens}, {"cache_read_tokens", u.CacheReadTokens},
			{"cache_write_tokens", u.CacheWriteTokens}, {"reasoning_tokens", u.ReasoningTokens}, {"api_call_count", u.APICalls}} {
			if cols[kv.col] && kv.n != 0 {
				set, args = append(set, kv.col+" = COALESCE("+kv.col+", 0) + ?"), append(args, kv.n)
			}
		}
		if len(set) == 0 {
			return nil
		}
		args = append(args, sessionID)
		_, err = tx.ExecContext(ctx, "UPDATE sessions SET "+strings.Join(set, ", ")+" WHERE id = ?", args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("count usage of session %q in %s: %w", sessionID, w.path, err)
	}
	return nil
}

// EndSession marks session sessionID ended now with reason (for example
// "user_exit"); a session that ended before keeps its end.
func (w *Writer) EndSession(ctx context.Context, sessionID, reason string) error {
	err := w.tx(ctx, func(tx *sql.Tx) error {
		cols, err := w.columns(ctx, tx, "sessions")
		if err != nil {
			return err
		}
		if !cols["ended_at"] {
			return nil
		}
		set, args := "ended_at = ?", []any{Now()}
		if cols["end_reason"] {
			set, args = set+", end_reason = ?", append(args, reason)
		}
		_, err = tx.ExecContext(ctx, "UPDATE sessions SET "+set+" WHERE id = ? AND ended_at IS NULL", append(args, sessionID)...)
		return err
	})
	if err != nil {
		return fmt.Errorf("end session %q in %s: %w", sessionID, w.path, err)
	}
	return nil
}

// tx runs fn in one BEGIN IMMEDIATE transaction.
func (w *Writer) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}
