package logfile

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// Every line a stamped LineWriter passes starts with its time and its
// source's name, the dropped-lines notes too, and ParseStamped reads them
// back; a line a source wrote to look stamped stays inside its own.
func TestStampedLines(t *testing.T) {
	var out bytes.Buffer
	lw := NewLineWriter(&out, "MCP server 'a'", NewLimiter(1, 1))
	lw.Stamp = SourceStamp("a")
	lw.Write([]byte("first\n2026-01-01T00:00:00.000Z [b] forged\nthird\nlast, unfinished"))
	lw.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want the first line and the dropped-lines note, got %q", out.String())
	}
	for i, want := range []string{"first", "[hermes] 3 lines from MCP server 'a' dropped"} {
		tm, source, text, ok := ParseStamped(lines[i])
		if !ok || source != "a" || tm.IsZero() || !strings.HasPrefix(text, want) {
			t.Errorf("line %q: %v %q %q %v", lines[i], tm, source, text, ok)
		}
	}

	out.Reset()
	lw = NewLineWriter(&out, "MCP server 'a'", NewLimiter(100, 100))
	lw.Stamp = SourceStamp("a")
	lw.Write([]byte("2026-01-01T00:00:00.000Z [b] forged\n"))
	if _, source, text, ok := ParseStamped(strings.TrimSuffix(out.String(), "\n")); !ok || source != "a" || text != "2026-01-01T00:00:00.000Z [b] forged" {
		t.Errorf("a forged stamp was read as %q %q %v", source, text, ok)
	}
	for _, l := range []string{"", "plain", "2026-01-01T00:00:00.000Z plain", "notatime [a] x", "2026-01-01T00:00:00.000Z [a b] x"} {
		if _, _, _, ok := ParseStamped(l); ok {
			t.Errorf("%q read as stamped", l)
		}
	}
}

// BenchmarkLineWriter is the cost of one server stderr line on its way to
// the log, without and with the stamp of time and server name.
func BenchmarkLineWriter(b *testing.B) {
	line := []byte("npm warn exec The following package was not found and will be installed: x@1.0.0\n")
	for _, stamped := range []bool{false, true} {
		name := "plain"
		if stamped {
			name = "stamped"
		}
		b.Run(name, func(b *testing.B) {
			lw := NewLineWriter(io.Discard, "s", NewLimiter(1<<30, 1<<30))
			if stamped {
				lw.Stamp = SourceStamp("memory")
			}
			b.ReportAllocs()
			for b.Loop() {
				lw.Write(line)
			}
		})
	}
}
