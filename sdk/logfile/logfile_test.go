package logfile_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/sdk/logfile"
)

func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// A file rotates before a write would take it past MaxBytes; Backups
// rotated files are kept, the newest as .1, and older ones are deleted.
func TestFileRotatesBySize(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.log")
	f, err := logfile.Open(path, logfile.Options{MaxBytes: 100, Backups: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		fmt.Fprintf(f, "line %02d %s\n", i, strings.Repeat("z", 21)) // 30 bytes
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got := files(t, dir)
	if len(got) != 3 {
		t.Fatalf("files %v, want x.log, x.log.1, x.log.2", slices.Sorted(mapsKeys(got)))
	}
	for name, text := range got {
		if len(text) > 100 {
			t.Errorf("%s holds %d bytes, over the limit", name, len(text))
		}
	}
	if !strings.HasPrefix(got["x.log"], "line 18") || !strings.HasPrefix(got["x.log.1"], "line 15") || !strings.HasPrefix(got["x.log.2"], "line 12") {
		t.Errorf("rotation order wrong: %q", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Two writers of one file (two processes) rotate it together: every line
// ends up in exactly one file, and none is over the limit by more than
// what each writer wrote since it last looked at the file's size.
func TestFileSharedByTwoWriters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shared.log")
	opts := logfile.Options{MaxBytes: 200, Backups: 100}
	var wg sync.WaitGroup
	for w := range 2 {
		f, err := logfile.Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer f.Close()
			for i := range 100 {
				fmt.Fprintf(f, "w%d %03d\n", w, i)
			}
		}()
	}
	wg.Wait()
	var lines []string
	for name, text := range files(t, dir) {
		if len(text) > 200+2*(200/16+len("w0 000\n")) {
			t.Errorf("%s holds %d bytes", name, len(text))
		}
		lines = append(lines, strings.Split(strings.TrimSuffix(text, "\n"), "\n")...)
	}
	slices.Sort(lines)
	var want []string
	for w := range 2 {
		for i := range 100 {
			want = append(want, fmt.Sprintf("w%d %03d", w, i))
		}
	}
	if !slices.Equal(lines, want) {
		t.Fatalf("got %d lines, want %d, each once", len(lines), len(want))
	}
}

// clock is a fake time source advanced by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Unix(1000, 0)} }
func limiter(rate, burst int, c *clock) *logfile.Limiter {
	l := logfile.NewLimiter(rate, burst)
	l.Now = c.now
	return l
}

// A source may log its burst at once, then its rate; each source has its
// own bucket; the first line allowed after drops reports how many.
func TestLimiterPerSource(t *testing.T) {
	c := newClock()
	l := limiter(2, 5, c)
	passed := 0
	for range 10 {
		if ok, _ := l.Allow("a"); ok {
			passed++
		}
	}
	if passed != 5 {
		t.Fatalf("%d of a burst of 10 passed, want 5", passed)
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Fatal("another source was limited by the first")
	}
	c.advance(time.Second)
	ok, dropped := l.Allow("a")
	if !ok || dropped != 5 {
		t.Fatalf("after a second: ok=%v dropped=%d, want true, 5", ok, dropped)
	}
	if ok, dropped := l.Allow("a"); !ok || dropped != 0 {
		t.Fatalf("second line after a second: ok=%v dropped=%d", ok, dropped)
	}
	if ok, _ := l.Allow("a"); ok {
		t.Fatal("the rate of 2 a second let a third line through")
	}
	if n := l.Flush("a"); n != 1 {
		t.Fatalf("Flush = %d, want 1", n)
	}
}

// A flood of lines through a LineWriter keeps the burst, drops the rest
// and says how many it dropped, when the source logs again and at Close.
func TestLineWriterFlood(t *testing.T) {
	c := newClock()
	var out bytes.Buffer
	lw := logfile.NewLineWriter(&out, "srv", limiter(10, 100, c))
	for i := range 100000 {
		fmt.Fprintf(lw, "noise %d\n", i)
	}
	c.advance(time.Second)
	fmt.Fprint(lw, "after\nunfinished")
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 100+3 {
		t.Fatalf("%d lines written, want 103:\n%s", len(lines), strings.Join(lines[max(0, len(lines)-5):], "\n"))
	}
	if lines[99] != "noise 99" || lines[100] != "[hermes] 99900 lines from srv dropped: more than 10 lines a second" ||
		lines[101] != "after" || lines[102] != "unfinished" {
		t.Fatalf("tail:\n%s", strings.Join(lines[98:], "\n"))
	}
	// Lines dropped at the end are reported by Close.
	out.Reset()
	lw = logfile.NewLineWriter(&out, "srv2", limiter(10, 1, c))
	fmt.Fprint(lw, "one\ntwo\nthree\n")
	lw.Close()
	if out.String() != "one\n[hermes] 2 lines from srv2 dropped: more than 10 lines a second\n" {
		t.Fatalf("got %q", out.String())
	}
}

// A line without an end is cut at MaxLineBytes; memory stays bounded.
func TestLineWriterCutsLongLines(t *testing.T) {
	var out bytes.Buffer
	lw := logfile.NewLineWriter(&out, "srv", logfile.NewLimiter(0, 0))
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for range 50 {
		lw.Write(chunk)
	}
	lw.Write([]byte("\nnext\n"))
	lw.Close()
	lines := strings.Split(out.String(), "\n")
	if len(lines[0]) != logfile.MaxLineBytes+len("…") || !strings.HasSuffix(lines[0], "…") || lines[1] != "next" {
		t.Fatalf("first line %d bytes, then %q", len(lines[0]), lines[1:])
	}
}
