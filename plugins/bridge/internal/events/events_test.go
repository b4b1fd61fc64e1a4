package events

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/store"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/fixture"
)

// The fixture's telegram conversation.
const (
	tgID  = "tg1"
	tgKey = "agent:main:telegram:dm:123456"
)

// long is a Wait timeout that only ends a test that would otherwise hang.
const long = 2 * time.Minute

// mustAbs is rel (slash-separated, from this package's folder) made absolute.
func mustAbs(t testing.TB, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.FromSlash(rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// appendMessages runs the writer process: n messages "prefix i" in tg1.
func appendMessages(t testing.TB, dir string, n int, prefix string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(fixture.Python(t), mustAbs(t, "testdata/writer.py"), "append",
		filepath.Join(dir, store.DBFile), tgID, strconv.Itoa(n), prefix)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func finish(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("writer: %v", err)
	}
}

func openStore(t testing.TB, dir string) *store.Store {
	t.Helper()
	s, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newWatcher(t testing.TB, s *store.Store, opts Options) *Watcher {
	t.Helper()
	w, err := New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// next waits for the first event after cursor.
func next(t testing.TB, w *Watcher, after int64, key string) Event {
	t.Helper()
	e, err := w.Wait(context.Background(), after, key, long)
	if err != nil {
		t.Fatal(err)
	}
	if e == nil {
		t.Fatalf("no event after cursor %d", after)
	}
	return *e
}

func TestHistoryNotEmitted(t *testing.T) {
	dir := fixture.Home(t, "current", false, false)
	s := openStore(t, dir)
	if _, err := s.CreateApproval(context.Background(), store.Approval{ID: "old", Kind: store.KindExec, SessionKey: tgKey}); err != nil {
		t.Fatal(err)
	}
	w := newWatcher(t, s, Options{})
	if evs, next := w.Poll(0, "", 200); len(evs) != 0 || next != 0 {
		t.Fatalf("Poll(0) at start = %v, %d; want no events", evs, next)
	}
	if e, err := w.Wait(context.Background(), 0, "", 0); e != nil || err != nil {
		t.Fatalf("Wait with timeout 0 = %v, %v; want nil, nil", e, err)
	}
	finish(t, appendMessages(t, dir, 1, "new"))
	e := next(t, w, 0, "")
	if e.Cursor != 1 || e.Type != TypeMessage || e.SessionKey != tgKey || e.Role != "user" || e.Content != "new 0" {
		t.Fatalf("first event = %+v; want cursor 1, the new message", e)
	}
	if _, err := strconv.ParseInt(e.MessageID, 10, 64); err != nil || e.Timestamp == "" {
		t.Fatalf("event %+v: message_id and timestamp must be set", e)
	}
}

// TestWriterProcess1000 consumes 1,000 appends of another process while
// they are written: every one, once, in order.
func TestWriterProcess1000(t *testing.T) {
	dir := fixture.Home(t, "current", false, false)
	w := newWatcher(t, openStore(t, dir), Options{})
	const n = 1000
	cmd := appendMessages(t, dir, n, "m")
	var got []Event
	cursor := int64(0)
	for len(got) < n {
		if len(got)%2 == 0 {
			e := next(t, w, cursor, tgKey)
			got = append(got, e)
			cursor = e.Cursor
			continue
		}
		evs, nx := w.Poll(cursor, "", 37)
		got = append(got, evs...)
		cursor = nx
	}
	finish(t, cmd)
	var lastID int64
	for i, e := range got {
		id, _ := strconv.ParseInt(e.MessageID, 10, 64)
		if e.Cursor != int64(i+1) || e.Content != fmt.Sprintf("m %d", i) || id <= lastID {
			t.Fatalf("event %d = %+v (previous id %d); want cursor %d, content m %d", i, e, lastID, i+1, i)
		}
		lastID = id
	}
	if evs, _ := w.Poll(cursor, "", 200); len(evs) != 0 {
		t.Fatalf("events after the last: %v", evs)
	}
}

func TestQueueDropsOldest(t *testing.T) {
	dir := fixture.Home(t, "current", false, false)
	w := newWatcher(t, openStore(t, dir), Options{})
	const n = QueueLimit + 100
	finish(t, appendMessages(t, dir, n, "q"))
	for cursor := int64(0); ; {
		e := next(t, w, cursor, "")
		if e.Content == fmt.Sprintf("q %d", n-1) {
			break
		}
		cursor = e.Cursor
	}
	evs, nx := w.Poll(0, "", 2*QueueLimit)
	if len(evs) != QueueLimit || evs[0].Cursor != 101 || evs[0].Content != "q 100" || nx != n {
		t.Fatalf("Poll(0) = %d events from %+v, next %d; want %d from cursor 101, next %d", len(evs), evs[0], nx, QueueLimit, n)
	}
}

func TestRestartKeepsCursors(t *testing.T) {
	dir := fixture.Home(t, "current", false, false)
	s := openStore(t, dir)
	w, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	finish(t, appendMessages(t, dir, 10, "before"))
	var cursor int64
	for i := 0; i < 10; i++ {
		cursor = next(t, w, cursor, "").Cursor
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Written while the plugin is down: events after the restart.
	finish(t, appendMessages(t, dir, 5, "down"))
	w2 := newWatcher(t, s, Options{})
	finish(t, appendMessages(t, dir, 3, "after"))
	want := []string{"down 0", "down 1", "down 2", "down 3", "down 4", "after 0", "after 1", "after 2"}
	c := cursor
	for i, text := range want {
		e := next(t, w2, c, "")
		if e.Cursor != cursor+int64(i+1) || e.Content != text {
			t.Fatalf("event %d after restart = %+v; want cursor %d, %q", i, e, cursor+int64(i+1), text)
		}
		c = e.Cursor
	}
	evs, _ := w2.Poll(0, "", 200)
	if len(evs) != len(want) {
		t.Fatalf("Poll(0) after restart = %d events; want %d (nothing replayed)", len(evs), len(want))
	}
}

func TestApprovals(t *testing.T) {
	dir := fixture.Home(t, "current", false, false)
	s := openStore(t, dir)
	ctx := context.Background()
	w := newWatcher(t, s, Options{})
	if _, err := s.CreateApproval(ctx, store.Approval{ID: "a1", Kind: store.KindExec, Description: "rm -rf build", SessionKey: tgKey}); err != nil {
		t.Fatal(err)
	}
	e := next(t, w, 0, tgKey)
	if e.Type != TypeApprovalRequested || e.ApprovalID != "a1" || e.Kind != store.KindExec || e.Description != "rm -rf build" {
		t.Fatalf("event = %+v; want approval_requested of a1", e)
	}
	if _, err := s.Respond(ctx, "a1", store.DecisionDeny); err != nil {
		t.Fatal(err)
	}
	e2 := next(t, w, e.Cursor, "")
	if e2.Type != TypeApprovalResolved || e2.ApprovalID != "a1" || e2.Decision != store.DecisionDeny || e2.SessionKey != tgKey {
		t.Fatalf("event = %+v; want approval_resolved of a1, deny", e2)
	}
	// Restarted: the approvals already reported are not reported again.
	w.Close()
	w3 := newWatcher(t, s, Options{})
	if _, err := s.CreateApproval(ctx, store.Approval{ID: "a2", Kind: store.KindPlugin, SessionKey: tgKey}); err != nil {
		t.Fatal(err)
	}
	e3 := next(t, w3, e2.Cursor, "")
	if e3.Type != TypeApprovalRequested || e3.ApprovalID != "a2" || e3.Cursor != e2.Cursor+1 {
		t.Fatalf("event after restart = %+v; want approval_requested of a2 at cursor %d", e3, e2.Cursor+1)
	}
}

func TestPollingFallback(t *testing.T) {
	dir := fixture.Home(t, "current", false, false)
	w := newWatcher(t, openStore(t, dir), Options{NoNotify: true, PollInterval: 10 * time.Millisecond})
	finish(t, appendMessages(t, dir, 3, "p"))
	var cursor int64
	for i := 0; i < 3; i++ {
		e := next(t, w, cursor, "")
		if e.Content != fmt.Sprintf("p %d", i) {
			t.Fatalf("event %d = %+v", i, e)
		}
		cursor = e.Cursor
	}
}

func TestPollFilterAndLimit(t *testing.T) {
	dir := fixture.Home(t, "current", false, false)
	w := newWatcher(t, openStore(t, dir), Options{})
	finish(t, appendMessages(t, dir, 5, "f"))
	for cursor := int64(0); cursor < 5; {
		cursor = next(t, w, cursor, "").Cursor
	}
	if evs, nx := w.Poll(1, "", 2); len(evs) != 2 || evs[0].Cursor != 2 || nx != 3 {
		t.Fatalf("Poll(1, limit 2) = %v, %d", evs, nx)
	}
	if evs, nx := w.Poll(0, "agent:main:discord:group:789:456", 10); len(evs) != 0 || nx != 0 {
		t.Fatalf("Poll of another session = %v, %d", evs, nx)
	}
	if e, err := w.Wait(context.Background(), 0, "agent:main:discord:group:789:456", time.Millisecond); e != nil || err != nil {
		t.Fatalf("Wait of another session = %v, %v; want timeout", e, err)
	}
}

func TestWaitContextAndClose(t *testing.T) {
	dir := fixture.Home(t, "current", false, false)
	w, err := New(openStore(t, dir), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if e, err := w.Wait(ctx, 0, "", long); e != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled ctx = %v, %v", e, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := w.Wait(context.Background(), 0, "", long)
		done <- err
	}()
	w.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("Wait across Close = %v; want ErrClosed", err)
	}
}

func TestTruncate(t *testing.T) {
	if got := truncate("héllo", 2); got != "hé" {
		t.Fatalf("truncate = %q", got)
	}
	if got := truncate("ab", 5); got != "ab" {
		t.Fatalf("truncate = %q", got)
	}
}

// BenchmarkWriteToEvent measures the time from a write by another process
// to the event returned by Wait: the writer appends one message at a time.
// The time includes the writer's insert and commit. notify is the watcher
// as it runs; poll-only has file notifications off, leaving the fallback.
func BenchmarkWriteToEvent(b *testing.B) {
	b.Run("notify", func(b *testing.B) { benchWriteToEvent(b, Options{}) })
	b.Run("poll-only", func(b *testing.B) { benchWriteToEvent(b, Options{NoNotify: true}) })
}

func benchWriteToEvent(b *testing.B, opts Options) {
	dir := fixture.Home(b, "current", false, false)
	w := newWatcher(b, openStore(b, dir), opts)
	cmd := exec.Command(fixture.Python(b), mustAbs(b, "testdata/writer.py"), "step", filepath.Join(dir, store.DBFile), tgID)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	out := bufio.NewReader(outPipe)
	defer func() {
		in.Close()
		cmd.Wait()
	}()
	var cursor int64
	step := func(i int) time.Duration {
		start := time.Now()
		if _, err := fmt.Fprintf(in, "bench %d\n", i); err != nil {
			b.Fatal(err)
		}
		e := next(b, w, cursor, "")
		d := time.Since(start)
		cursor = e.Cursor
		if _, err := out.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
		return d
	}
	// The first write waits for the interpreter to start: not measured.
	step(-1)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat = append(lat, step(i))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[(len(lat)*99)/100]), "p99-ms")
}

// TestDatabaseCreatedLater watches a HERMES_HOME without state.db: the
// database the agent creates afterwards is seen, and all of it is new.
func TestDatabaseCreatedLater(t *testing.T) {
	fixture.Python(t)
	dir := t.TempDir()
	w := newWatcher(t, openStore(t, dir), Options{})
	fixture.MakeStateDB(t, "current", filepath.Join(dir, store.DBFile))
	var got []string
	for cursor := int64(0); len(got) == 0 || got[len(got)-1] != "iso reply"; {
		e := next(t, w, cursor, "")
		got = append(got, e.Content)
		cursor = e.Cursor
	}
	// Active user and assistant messages with text of the indexed
	// conversations; not the system, tool, rewound, empty or ended ones.
	want := []string{"hello", "here is the chart\nMEDIA: files/report.pdf", "thanks", "hi discord", "iso reply"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events = %q; want %q", got, want)
	}
}
