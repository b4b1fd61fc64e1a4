package statedb

import "testing"

// BenchmarkAppendMessage: one message appended and counted (one BEGIN
// IMMEDIATE transaction, WAL, the default synchronous setting).
func BenchmarkAppendMessage(b *testing.B) {
	w := newWriter(b)
	s, err := w.CreateSession(ctx, Session{})
	if err != nil {
		b.Fatal(err)
	}
	m := NewMessage{Role: "assistant", Content: "a reply of a few words, as a model writes it"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.AppendMessage(ctx, s.ID, m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadNewMessage: what the bridge does per new message: read the
// messages after the last id it saw, on a read-only connection, with
// 1000 messages in the table.
func BenchmarkReadNewMessage(b *testing.B) {
	w := newWriter(b)
	s, err := w.CreateSession(ctx, Session{})
	if err != nil {
		b.Fatal(err)
	}
	var last int64
	for range 1000 {
		if last, err = w.AppendMessage(ctx, s.ID, NewMessage{Role: "user", Content: "m"}); err != nil {
			b.Fatal(err)
		}
	}
	db := reader(b, w.Path())
	b.ReportAllocs()
	for b.Loop() {
		msgs, err := MessagesAfter(ctx, db, last-1, 50)
		if err != nil || len(msgs) != 1 {
			b.Fatal(len(msgs), err)
		}
	}
}
