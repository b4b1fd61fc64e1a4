package store

import (
	"path/filepath"
	"testing"

	"github.com/hermes-agent/hermes/statedb"
)

// TestHostWriterOnAgentDatabases: the host's writer (statedb.Writer)
// writes a terminal conversation into databases the Python agent made
// (current schema with its full-text triggers, March 2026 schema); the
// store reads it back: the current schema lists it under its terminal key
// (the March schema has no session_key, hence no index from state.db), its
// messages decode, the agent's own rows are untouched, and no channel is
// offered for it.
func TestHostWriterOnAgentDatabases(t *testing.T) {
	for _, kind := range []string{"current", "march"} {
		t.Run(kind, func(t *testing.T) {
			dir := home(t, kind, false)
			w, err := statedb.OpenWriter(ctx, filepath.Join(dir, DBFile))
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			sess, err := w.CreateSession(ctx, statedb.Session{Title: "from the terminal"})
			if err != nil {
				t.Fatal(err)
			}
			parts, _ := statedb.EncodeParts([]any{statedb.TextPart("a"), statedb.TextPart("b")})
			for _, m := range []statedb.NewMessage{{Role: "user", Content: "question"}, {Role: "assistant", Content: parts}} {
				if _, err := w.AppendMessage(ctx, sess.ID, m); err != nil {
					t.Fatal(err)
				}
			}
			s := open(t, dir)
			msgs, err := s.Messages(ctx, sess.ID)
			if err != nil || len(msgs) != 2 || msgs[0].Text != "question" || msgs[1].Text != "a\nb" {
				t.Fatalf("messages %+v %v", msgs, err)
			}
			entries, _, err := s.Sessions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var found *Entry
			for i, e := range entries {
				if e.SessionID == sess.ID {
					found = &entries[i]
				}
			}
			if kind == "march" {
				if found != nil {
					t.Fatalf("march schema listed %+v", found)
				}
				return
			}
			if found == nil || found.SessionKey != statedb.TerminalSessionKey(sess.ID) || !found.Terminal || found.Platform != "cli" ||
				found.DisplayName != "from the terminal" {
				t.Fatalf("terminal session in the index: %+v (all: %+v)", found, entries)
			}
			if len(entries) != 3 {
				t.Fatalf("index has %d entries, want the agent's two and the terminal one", len(entries))
			}
			agent, err := s.Messages(ctx, "tg1")
			if err != nil || len(agent) != 6 {
				t.Fatalf("the agent's messages: %d %v", len(agent), err)
			}
			chans, err := s.Channels(ctx, "cli")
			if err != nil || len(chans) != 0 {
				t.Fatalf("channels of a terminal session: %+v %v", chans, err)
			}
		})
	}
}
