package store

import (
	"path/filepath"
	"testing"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/fixture"
)

// TestReadWhileWriting reads state.db while a Python process appends
// messages in WAL mode, one commit each: no read fails and every appended
// row is seen exactly once, in order.
func TestReadWhileWriting(t *testing.T) {
	const n = 300
	dir := home(t, "current", true)
	s := open(t, dir)
	start, err := s.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cmd := fixture.Command(t, "make_state_db.py", "append", filepath.Join(dir, DBFile), "tg1", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	cursor := start.MaxMessageID
	var seen []Message
	read := func() {
		t.Helper()
		if _, err := s.Changes(ctx); err != nil {
			t.Fatalf("Changes while writing: %v", err)
		}
		if _, _, err := s.Sessions(ctx); err != nil {
			t.Fatalf("Sessions while writing: %v", err)
		}
		msgs, err := s.MessagesAfter(ctx, cursor, 50)
		if err != nil {
			t.Fatalf("MessagesAfter while writing: %v", err)
		}
		for _, m := range msgs {
			if m.ID <= cursor {
				t.Fatalf("message %d after cursor %d", m.ID, cursor)
			}
			cursor = m.ID
			seen = append(seen, m)
		}
	}
	reads := 0
	for running := true; running; reads++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("writer: %v", err)
			}
			running = false
		default:
		}
		read()
	}
	for before := -1; before != len(seen); {
		before = len(seen)
		read()
	}
	t.Logf("%d reads while the writer ran", reads)
	if len(seen) != n {
		t.Fatalf("saw %d appended messages in %d reads, want %d", len(seen), reads, n)
	}
	for i, m := range seen {
		if m.ID != start.MaxMessageID+int64(i)+1 || m.SessionID != "tg1" {
			t.Fatalf("message %d = %+v, want id %d of tg1", i, m, start.MaxMessageID+int64(i)+1)
		}
	}
	msgs, err := s.Messages(ctx, "tg1")
	if err != nil || len(msgs) != 6+n {
		t.Fatalf("tg1 has %d messages (%v), want %d", len(msgs), err, 6+n)
	}
}
