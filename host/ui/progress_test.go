package ui_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/ui"
	"github.com/hermes-agent/hermes/internal/testpty"
)

// On a terminal the line is rewritten in place, escaped, cut to the
// width and cleared; elsewhere nothing is written.
func TestProgressLine(t *testing.T) {
	tp := testpty.Open(t, 10, 40)
	l := ui.NewProgressLine(tp.TTY())
	if !l.On() {
		t.Fatal("a terminal's line is off")
	}
	l.Show(ui.ProgressText("slow", 1, 4, "step \x1b[31mred"))
	tp.WaitFor("slow: 1/4 (25%) step")
	l.Show(ui.ProgressText("slow", 2, 0, strings.Repeat("x", 100)))
	l.Close()
	tp.WaitFor("…\r\x1b[K")
	out := tp.Output()
	if strings.Contains(out, "\x1b[31m") || !strings.Contains(out, `\x1b[31mred`) {
		t.Errorf("the server's escape reached the terminal:\n%q", out)
	}
	if strings.Contains(out, strings.Repeat("x", 40)) {
		t.Errorf("the line was not cut to the width:\n%q", out)
	}
	if !strings.HasSuffix(out, "…\r\x1b[K") {
		t.Errorf("the line was not cleared at the end:\n%q", out)
	}

	var buf bytes.Buffer
	off := ui.NewProgressLine(&buf)
	off.Show("x")
	off.Close()
	if off.On() || buf.Len() != 0 {
		t.Errorf("off a terminal it wrote %q", buf.String())
	}
}
