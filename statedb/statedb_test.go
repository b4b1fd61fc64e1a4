package statedb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var ctx = context.Background()

func newWriter(t testing.TB) *Writer {
	t.Helper()
	w, err := OpenWriter(ctx, filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func reader(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := OpenRead(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestWriterRoundTrip writes a terminal conversation (text, multipart,
// tool calls, a tool result) and reads it back with the readers the bridge
// uses: the messages decoded, the session listed under its terminal key
// with its counts, and gone from the index once ended.
func TestWriterRoundTrip(t *testing.T) {
	w := newWriter(t)
	if fi, err := os.Stat(w.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state.db mode: %v %v, want 0600", fi, err)
	}
	s, err := w.CreateSession(ctx, Session{Model: "m1", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID == "" || s.Source != TerminalSource {
		t.Fatalf("session %+v", s)
	}
	parts, err := EncodeParts([]any{TextPart("look"), map[string]any{"type": "image_url", "image_url": map[string]any{"url": "file:///a.png"}}, TextPart("here")})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []NewMessage{
		{Role: "user", Content: EncodeText("hello \x00 there")},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Type: "function", Function: ToolCallFunction{Name: "mcp_fs_read", Arguments: `{"p":1}`}}, {ID: "c2", Type: "function", Function: ToolCallFunction{Name: "mcp_fs_list", Arguments: `{}`}}}},
		{Role: "tool", ToolCallID: "c1", ToolName: "mcp_fs_read", Content: "file text"},
		{Role: "assistant", Content: parts, FinishReason: "stop", TokenCount: 7},
	}
	var ids []int64
	for _, m := range msgs {
		id, err := w.AppendMessage(ctx, s.ID, m)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := w.AddUsage(ctx, s.ID, Usage{InputTokens: 100, OutputTokens: 20, APICalls: 2}); err != nil {
		t.Fatal(err)
	}
	db := reader(t, w.Path())
	got, err := Messages(ctx, db, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0].Text != "hello \x00 there" || got[2].Role != "tool" || got[2].Text != "file text" ||
		got[3].Text != "look\nhere" || len(got[3].Parts) != 1 || PartType(got[3].Parts[0]) != "image_url" {
		t.Fatalf("messages: %+v", got)
	}
	for i, m := range got {
		if m.ID != ids[i] || m.SessionID != s.ID || m.Timestamp.Time.IsZero() {
			t.Fatalf("message %d: %+v, id want %d", i, m, ids[i])
		}
	}
	if !got[0].Conversational() || got[1].Conversational() || got[2].Conversational() {
		t.Fatal("Conversational: want only the user message and the final assistant text")
	}
	var calls string
	var count, toolCalls, in, out, apiCalls int64
	if err := db.QueryRow("SELECT tool_calls FROM messages WHERE id = ?", ids[1]).Scan(&calls); err != nil {
		t.Fatal(err)
	}
	var decoded []ToolCall
	if err := json.Unmarshal([]byte(calls), &decoded); err != nil || len(decoded) != 2 || decoded[0].Function.Name != "mcp_fs_read" {
		t.Fatalf("tool_calls %q: %v", calls, err)
	}
	if err := db.QueryRow("SELECT message_count, tool_call_count, input_tokens, output_tokens, api_call_count FROM sessions WHERE id = ?", s.ID).
		Scan(&count, &toolCalls, &in, &out, &apiCalls); err != nil {
		t.Fatal(err)
	}
	if count != 4 || toolCalls != 2 || in != 100 || out != 20 || apiCalls != 2 {
		t.Fatalf("counts %d %d %d %d %d", count, toolCalls, in, out, apiCalls)
	}
	var key sql.NullString
	if err := db.QueryRow("SELECT session_key FROM sessions WHERE id = ?", s.ID).Scan(&key); err != nil || key.Valid {
		t.Fatalf("a terminal session has no session_key: %v %v", key, err)
	}
	index, err := IndexSessions(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if len(index) != 1 || index[0].SessionKey != TerminalSessionKey(s.ID) || !index[0].Terminal || index[0].Source != "cli" ||
		index[0].InputTokens != 100 || index[0].LastActive.Time.Before(index[0].StartedAt.Time) {
		t.Fatalf("index: %+v", index)
	}
	after, err := MessagesAfter(ctx, db, ids[1], 0)
	if err != nil || len(after) != 2 || after[0].ID != ids[2] {
		t.Fatalf("MessagesAfter: %+v %v", after, err)
	}
	if err := w.EndSession(ctx, s.ID, "user_exit"); err != nil {
		t.Fatal(err)
	}
	if index, err = IndexSessions(ctx, db); err != nil || len(index) != 0 {
		t.Fatalf("ended session still listed: %+v %v", index, err)
	}
	if _, err := w.AppendMessage(ctx, s.ID, NewMessage{Role: "user", Content: "late"}); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("append to an ended session: %v, want ErrSessionEnded", err)
	}
	if _, err := w.AppendMessage(ctx, "nope", NewMessage{Role: "user", Content: "x"}); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("append to an unknown session: %v, want ErrSessionEnded", err)
	}
}

// TestOlderSchemas: a database another writer made with the March 2026
// columns or the minimal columns of the agent's tests is neither altered
// nor refused: the writer adds its own tables, writes what the columns
// allow, and the readers read it (ISO text timestamps included).
func TestOlderSchemas(t *testing.T) {
	for name, ddl := range map[string]string{
		"march": `CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, started_at REAL NOT NULL, ended_at REAL, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, title TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT)`,
		"minimal": `CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at TEXT, message_count INTEGER);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, role TEXT, content TEXT, timestamp TEXT);
INSERT INTO sessions VALUES ('s0', 'telegram', '2026-03-29T12:00:00', 1);
INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s0', 'user', 'old', '2026-03-29T12:00:01')`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			raw, err := sql.Open(DriverName, DSN(path, Create))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := raw.Exec(ddl); err != nil {
				t.Fatal(err)
			}
			raw.Close()
			w, err := OpenWriter(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			s, err := w.CreateSession(ctx, Session{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.AppendMessage(ctx, s.ID, NewMessage{Role: "assistant", Content: "new", ToolCalls: []ToolCall{{ID: "x"}}}); err != nil {
				t.Fatal(err)
			}
			db := reader(t, path)
			cols, err := Columns(ctx, db, "sessions")
			if err != nil || cols["session_key"] {
				t.Fatalf("the sessions table was altered: %v %v", cols, err)
			}
			msgs, err := Messages(ctx, db, s.ID)
			if err != nil || len(msgs) != 1 || msgs[0].Text != "new" {
				t.Fatalf("messages: %+v %v", msgs, err)
			}
			if name == "minimal" {
				old, err := Messages(ctx, db, "s0")
				if err != nil || len(old) != 1 || old[0].Timestamp.ISO() != "2026-03-29T12:00:01" {
					t.Fatalf("old messages: %+v %v", old, err)
				}
			}
			if idx, err := IndexSessions(ctx, db); err != nil || idx != nil {
				t.Fatalf("a schema without session_key has no index: %+v %v", idx, err)
			}
			if _, err := CreateApproval(ctx, w.DB(), Approval{Kind: KindTool}); err != nil {
				t.Fatal(err)
			}
			// The host's sampling table is added to the agent's database.
			if cols, err := Columns(ctx, db, "mcp_sampling_usage"); err != nil || !cols["tokens"] {
				t.Fatalf("mcp_sampling_usage: %v %v", cols, err)
			}
		})
	}
}

// TestApprovals: the lifecycle of one approval, the errors of Respond, and
// the grants.
func TestApprovals(t *testing.T) {
	w := newWriter(t)
	db := reader(t, w.Path())
	a, err := CreateApproval(ctx, w.DB(), Approval{Kind: KindTool, Description: "d", SessionKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CreateApproval(ctx, w.DB(), Approval{ID: a.ID, Kind: KindTool}); !errors.Is(err, ErrApprovalExists) {
		t.Fatalf("duplicate id: %v", err)
	}
	open, err := OpenApprovals(ctx, db)
	if err != nil || len(open) != 1 || open[0].ID != a.ID || open[0].Description != "d" {
		t.Fatalf("open: %+v %v", open, err)
	}
	if _, err := Respond(ctx, w.DB(), a.ID, "maybe"); !errors.Is(err, ErrInvalidDecision) {
		t.Fatalf("invalid decision: %v", err)
	}
	if _, err := Respond(ctx, w.DB(), "nope", DecisionDeny); !errors.Is(err, ErrApprovalNotFound) || errors.Is(err, ErrAlreadyDecided) {
		t.Fatalf("unknown id: %v", err)
	}
	d, err := Respond(ctx, w.DB(), a.ID, DecisionAllowOnce)
	if err != nil || d.Decision != DecisionAllowOnce || d.DecidedAt == 0 {
		t.Fatalf("respond: %+v %v", d, err)
	}
	_, err = Respond(ctx, w.DB(), a.ID, DecisionDeny)
	var nf *NotFoundError
	if !errors.As(err, &nf) || !nf.Decided || nf.Decision != DecisionAllowOnce || !errors.Is(err, ErrAlreadyDecided) {
		t.Fatalf("second respond: %v", err)
	}
	if got, found, err := GetApproval(ctx, db, a.ID); err != nil || !found || got.Decision != DecisionAllowOnce {
		t.Fatalf("get: %+v %v %v", got, found, err)
	}
	if err := AddGrant(ctx, w.DB(), Grant{Server: "fs", Tool: "rm", ApprovalID: a.ID}); err != nil {
		t.Fatal(err)
	}
	if err := AddGrant(ctx, w.DB(), Grant{Server: "fs", Tool: "mv"}); err != nil {
		t.Fatal(err)
	}
	g, err := Grants(ctx, db, "fs")
	if err != nil || len(g) != 2 || g[0].Tool != "mv" || g[1].ApprovalID != a.ID {
		t.Fatalf("grants: %+v %v", g, err)
	}
	if n, err := RevokeGrants(ctx, w.DB(), "fs", "rm"); err != nil || n != 1 {
		t.Fatalf("revoke: %d %v", n, err)
	}
	if g, _ := Grants(ctx, db, ""); len(g) != 1 || g[0].Tool != "mv" {
		t.Fatalf("after revoke: %+v", g)
	}
}

// TestRespondRace: two connections (as two processes would have) answer
// one approval at once, many times over: exactly one wins each time and
// the loser learns the decision that stood.
func TestRespondRace(t *testing.T) {
	w := newWriter(t)
	other, err := OpenWrite(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for round := 0; round < 20; round++ {
		a, err := CreateApproval(ctx, w.DB(), Approval{Kind: KindTool})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		results := make([]error, 2)
		decided := make([]Approval, 2)
		for i, db := range []*sql.DB{w.DB(), other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				decided[i], results[i] = Respond(ctx, db, a.ID, []string{DecisionAllowOnce, DecisionDeny}[i])
			}()
		}
		wg.Wait()
		won := 0
		for i, err := range results {
			if err == nil {
				won++
				continue
			}
			var nf *NotFoundError
			if !errors.As(err, &nf) || !nf.Decided || nf.Decision != decided[1-i].Decision {
				t.Fatalf("round %d: loser %d got %v, winner decided %q", round, i, err, decided[1-i].Decision)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d winners (%v)", round, won, results)
		}
	}
}

// TestConcurrentReader: a reader polls while the writer appends; every
// row is seen exactly once and in order, and no read fails.
func TestConcurrentReader(t *testing.T) {
	const n = 200
	w := newWriter(t)
	s, err := w.CreateSession(ctx, Session{})
	if err != nil {
		t.Fatal(err)
	}
	db := reader(t, w.Path())
	done := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			if _, err := w.AppendMessage(ctx, s.ID, NewMessage{Role: "user", Content: "m"}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var last int64
	seen := 0
	finished := false
	for !finished || seen < n {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		default:
		}
		msgs, err := MessagesAfter(ctx, db, last, 50)
		if err != nil {
			t.Fatalf("read while writing: %v", err)
		}
		for _, m := range msgs {
			if m.ID <= last {
				t.Fatalf("id %d after %d", m.ID, last)
			}
			last = m.ID
			seen++
		}
		if finished && len(msgs) == 0 && seen < n {
			t.Fatalf("saw %d of %d", seen, n)
		}
	}
}

// TestContentCodec: what EncodeParts and EncodeText store decodes back;
// bare JSON lists of typed parts from older writers are multipart, other
// text is text.
func TestContentCodec(t *testing.T) {
	for _, tc := range []struct {
		in    any
		text  string
		parts int
	}{
		{"plain", "plain", 0},
		{nil, "", 0},
		{[]byte("bytes"), "bytes", 0},
		{ContentJSONPrefix + `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, "a\nb", 0},
		{ContentJSONPrefix + `"just text"`, "just text", 0},
		{ContentJSONPrefix + `{"type":"image","url":"u"}`, "", 1},
		{ContentJSONPrefix + `[1, "x", {"type":"audio"}]`, "", 1},
		{ContentJSONPrefix + `not json`, ContentJSONPrefix + "not json", 0},
		{`[{"type":"text","text":"old"}]`, "old", 0},
		{`[1, 2]`, "[1, 2]", 0},
		{`[]`, "[]", 0},
	} {
		text, parts := DecodeContent(tc.in)
		if text != tc.text || len(parts) != tc.parts {
			t.Errorf("DecodeContent(%q) = %q, %d parts; want %q, %d", tc.in, text, len(parts), tc.text, tc.parts)
		}
	}
	enc, err := EncodeParts([]any{TextPart("x\n"), TextPart("y")})
	if err != nil {
		t.Fatal(err)
	}
	if text, parts := DecodeContent(enc); text != "x\n\ny" || len(parts) != 0 {
		t.Fatalf("round trip: %q %d", text, len(parts))
	}
	if _, err := EncodeParts([]any{func() {}}); err == nil {
		t.Fatal("EncodeParts of a function: want an error")
	}
}

// TestTerminalKey names the terminal sessions in the gateway's key format.
func TestTerminalKey(t *testing.T) {
	if got := TerminalSessionKey("20260329_120000_abc123"); got != "agent:main:cli:dm:20260329_120000_abc123" {
		t.Fatal(got)
	}
	id, err := NewSessionID(time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC))
	if err != nil || len(id) != len("20260329_120000_abc123") || id[:16] != "20260329_120000_" {
		t.Fatalf("NewSessionID = %q %v", id, err)
	}
}
