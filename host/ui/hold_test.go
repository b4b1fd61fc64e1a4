package ui

import (
	"strings"
	"testing"
)

// countingWriter counts the writes it gets.
type countingWriter struct {
	strings.Builder
	writes int
}

func (w *countingWriter) Write(b []byte) (int, error) {
	w.writes++
	return w.Builder.Write(b)
}

func (w *countingWriter) WriteString(s string) (int, error) {
	w.writes++
	return w.Builder.WriteString(s)
}

// While a Hold lasts nothing reaches the output; its release writes all of
// it in one write, in order; a Hold within it adds nothing.
func TestHoldWritesOnce(t *testing.T) {
	out := &countingWriter{}
	p := NewEnv(out, nil, nil, func(string) string { return "" })
	release := p.Hold()
	p.Header("Servers")
	inner := p.Hold()
	for i := range 20 {
		p.Line("line %d", i)
	}
	inner()
	if out.writes != 0 {
		t.Fatalf("%d writes reached the output during the hold", out.writes)
	}
	release()
	if out.writes != 1 {
		t.Fatalf("%d writes for the held output, want 1", out.writes)
	}
	got := out.String()
	if !strings.HasPrefix(got, "  Servers\n") || !strings.Contains(got, "line 0\n") || !strings.HasSuffix(got, "line 19\n") {
		t.Fatalf("held output:\n%s", got)
	}
	p.Line("after")
	if out.writes != 2 {
		t.Fatalf("a write after the release was held too (%d writes)", out.writes)
	}
}
