package store

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/fixture"
	"github.com/hermes-agent/hermes/plugins/bridge/internal/send"
	"github.com/hermes-agent/hermes/statedb"
)

// rawDB opens dir's state.db read-only apart from the store, to check what
// RecordSent wrote.
func rawDB(t testing.TB, dir string) *sql.DB {
	t.Helper()
	db, err := statedb.OpenRead(filepath.Join(dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func queryInt(t testing.TB, db *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var n sql.NullInt64
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n.Int64
}

func sent(platform, chat, thread string, ids ...string) *send.Result {
	return &send.Result{Platform: platform, ChatID: chat, ThreadID: thread, MessageIDs: ids}
}

// lastMessage is the last active message of session id.
func lastMessage(t testing.TB, s *Store, id string) Message {
	t.Helper()
	msgs, err := s.Messages(ctx, id)
	if err != nil || len(msgs) == 0 {
		t.Fatalf("messages of %s: %d, %v", id, len(msgs), err)
	}
	return msgs[len(msgs)-1]
}

// TestRecordSent records into the current schema, whose messages table
// has the FTS5 triggers of the agent (messages_fts and
// messages_fts_trigram): the row is an active assistant message with the
// platform's id, indexed by both tables, and counted in its session.
func TestRecordSent(t *testing.T) {
	dir := home(t, "current", false)
	s := open(t, dir)
	raw := rawDB(t, dir)
	before := queryInt(t, raw, "SELECT MAX(id) FROM messages")
	text := "the zeppelin report is ready, Ünïcode included"
	if err := s.RecordSent(ctx, "telegram:Alice", text, sent("telegram", "123456", "", "41", "42")); err != nil {
		t.Fatal(err)
	}
	m := lastMessage(t, s, "tg1")
	if m.ID != before+1 || m.Role != "assistant" || m.Text != text || !m.Conversational() {
		t.Fatalf("recorded %+v, want assistant %q with id %d", m, text, before+1)
	}
	if m.Timestamp.Time.IsZero() {
		t.Fatalf("timestamp %v does not parse", m.Timestamp.Raw)
	}
	if _, ok := m.Timestamp.Raw.(float64); !ok {
		t.Errorf("timestamp %#v, want float seconds", m.Timestamp.Raw)
	}
	var pid string
	var active int
	if err := raw.QueryRow("SELECT platform_message_id, active FROM messages WHERE id = ?", m.ID).Scan(&pid, &active); err != nil {
		t.Fatal(err)
	}
	if pid != "42" || active != 1 {
		t.Errorf("platform_message_id %q active %d, want the last part's id 42 and 1", pid, active)
	}
	if n := queryInt(t, raw, "SELECT message_count FROM sessions WHERE id = 'tg1'"); n != 1 {
		t.Errorf("message_count %d, want 1", n)
	}
	if n := queryInt(t, raw, "SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'zeppelin'"); n != m.ID {
		t.Errorf("messages_fts finds row %d, want %d", n, m.ID)
	}
	if n := queryInt(t, raw, "SELECT rowid FROM messages_fts_trigram WHERE messages_fts_trigram MATCH ?", `"ady, Ü"`); n != m.ID {
		t.Errorf("messages_fts_trigram finds row %d, want %d", n, m.ID)
	}
	// The recorded row is what MessagesAfter hands the event watcher.
	after, err := s.MessagesAfter(ctx, before, 0)
	if err != nil || len(after) != 1 || after[0].ID != m.ID {
		t.Fatalf("MessagesAfter(%d) = %+v, %v", before, after, err)
	}
}

// TestRecordSentMatching picks the conversation by platform, chat and
// thread, and records nothing when none matches.
func TestRecordSentMatching(t *testing.T) {
	dir := home(t, "current", false)
	s := open(t, dir)
	raw := rawDB(t, dir)
	cases := []struct {
		res     *send.Result
		session string // "" for ErrNoSession
	}{
		{sent("discord", "789", "t9", "1"), "dc1"},
		{sent("Discord", "789", "", "2"), "dc1"}, // only a thread session: it takes the message
		{sent("discord", "789", "t8", "3"), ""},  // another thread
		{sent("telegram", "999", "", "4"), ""},   // an unknown chat
		{sent("telegram", "123456", "7", "5"), ""},
		{sent("slack", "C1234", "", "6"), ""}, // its session has ended
		{sent("discord", "old", "", "7"), ""},
	}
	for _, c := range cases {
		max := queryInt(t, raw, "SELECT MAX(id) FROM messages")
		target := c.res.Platform + ":" + c.res.ChatID
		err := s.RecordSent(ctx, target, "msg "+c.res.MessageID(), c.res)
		if c.session == "" {
			if !errors.Is(err, ErrNoSession) {
				t.Errorf("%+v: %v, want ErrNoSession", c.res, err)
			}
			if n := queryInt(t, raw, "SELECT MAX(id) FROM messages"); n != max {
				t.Errorf("%+v: a row was written", c.res)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", c.res, err)
			continue
		}
		if m := lastMessage(t, s, c.session); m.Text != "msg "+c.res.MessageID() {
			t.Errorf("%+v: last message of %s is %q", c.res, c.session, m.Text)
		}
	}
	if err := s.RecordSent(ctx, "telegram:1", "x", nil); err == nil || errors.Is(err, ErrNoSession) {
		t.Errorf("nil result: %v, want an error that is not ErrNoSession", err)
	}
}

// TestRecordSentOlderSchemas records through the sessions.json index into
// the March 2026 schema (no active, no platform_message_id) and the
// agent's minimal test schema (TEXT timestamps), writing the columns that
// exist; without state.db it writes nothing and creates nothing.
func TestRecordSentOlderSchemas(t *testing.T) {
	const id = "20260329_120000_abc123"
	for _, kind := range []string{"march", "minimal"} {
		t.Run(kind, func(t *testing.T) {
			dir := home(t, kind, true)
			s := open(t, dir)
			raw := rawDB(t, dir)
			count := queryInt(t, raw, "SELECT message_count FROM sessions WHERE id = ?", id)
			if err := s.RecordSent(ctx, "telegram:123456", "older "+kind, sent("telegram", "123456", "", "9")); err != nil {
				t.Fatal(err)
			}
			if m := lastMessage(t, s, id); m.Text != "older "+kind || m.Role != "assistant" || m.Timestamp.Time.IsZero() {
				t.Fatalf("recorded %+v", m)
			}
			if n := queryInt(t, raw, "SELECT message_count FROM sessions WHERE id = ?", id); n != count+1 {
				t.Errorf("message_count %d, want %d", n, count+1)
			}
		})
	}
	dir := home(t, "", true)
	s := open(t, dir)
	err := s.RecordSent(ctx, "telegram:123456", "x", sent("telegram", "123456", "", "9"))
	if !errors.Is(err, ErrNoDatabase) {
		t.Errorf("without state.db: %v, want ErrNoDatabase", err)
	}
	if _, err := os.Stat(filepath.Join(dir, DBFile)); err == nil {
		t.Errorf("RecordSent created state.db")
	}
}

// TestRecordSentWhileWriting records messages while a Python process
// appends to the same session, one commit each: no write fails on the
// lock, no row of either writer is lost, and each recorded message is
// counted in its session.
func TestRecordSentWhileWriting(t *testing.T) {
	const appended, recorded = 300, 30
	dir := home(t, "current", false)
	s := open(t, dir)
	raw := rawDB(t, dir)
	cmd := fixture.Command(t, "make_state_db.py", "append", filepath.Join(dir, DBFile), "tg1", strconv.Itoa(appended))
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Three goroutines record until the writer has finished, and at least
	// `recorded` messages in all, so the two writers overlap.
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		next    int
		during  int
		stopped bool
		errs    []error
	)
	for range 3 {
		wg.Go(func() {
			for {
				mu.Lock()
				if stopped && next >= recorded {
					mu.Unlock()
					return
				}
				i := next
				next++
				if !stopped {
					during++
				}
				mu.Unlock()
				res := sent("telegram", "123456", "", strconv.Itoa(1000+i))
				if err := s.RecordSent(ctx, "telegram:123456", fmt.Sprintf("recorded %d", i), res); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	werr := <-done
	mu.Lock()
	stopped = true
	mu.Unlock()
	wg.Wait()
	if werr != nil {
		t.Fatalf("python writer: %v\n%s", werr, out.String())
	}
	for _, err := range errs {
		t.Errorf("RecordSent while Python writes: %v", err)
	}
	total := next
	t.Logf("%d messages recorded, %d of them while the writer ran", total, during)
	msgs, err := s.Messages(ctx, "tg1")
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]int{}
	for _, m := range msgs {
		texts[m.Text]++
	}
	for i := range appended {
		if texts[fmt.Sprintf("append %d", i)] != 1 {
			t.Errorf("appended message %d seen %d times", i, texts[fmt.Sprintf("append %d", i)])
		}
	}
	for i := range total {
		if texts[fmt.Sprintf("recorded %d", i)] != 1 {
			t.Errorf("recorded message %d seen %d times", i, texts[fmt.Sprintf("recorded %d", i)])
		}
	}
	if n := queryInt(t, raw, "SELECT message_count FROM sessions WHERE id = 'tg1'"); n != int64(total) {
		t.Errorf("message_count %d, want %d", n, total)
	}
	if n, want := queryInt(t, raw, "SELECT COUNT(*) FROM messages_fts"), queryInt(t, raw, "SELECT COUNT(*) FROM messages"); n != want {
		t.Errorf("messages_fts has %d rows for %d messages", n, want)
	}
}

// syncBuffer collects a child's output.
type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
