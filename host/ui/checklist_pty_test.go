//go:build unix

package ui

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testpty"
)

// termQuery matches the queries a terminal answers: OSC 10/11 (foreground
// and background colour) and DSR (cursor position).
var termQuery = regexp.MustCompile(`\x1b\](?:10|11);\?|\x1b\[6n`)

// finalErase is the end of a checklist's output: back to its first line,
// erase everything below and show the cursor again.
var finalErase = regexp.MustCompile(`\r(?:\x1b\[\d+A)?\x1b\[J\x1b\[\?25h$`)

func TestChecklistTerminalOutput(t *testing.T) {
	tp := openPTY(t)
	p := printerOn(tp)
	ch := run(func() ([]string, error) { return p.Checklist("Select tools", tools(false)) })
	tp.WaitFor("0/3 selected")
	tp.Press("x")
	tp.WaitFor("1/3 selected")
	tp.Press(testpty.KeyEnter)
	got, err := wait(t, ch)
	if err != nil || strings.Join(got, ",") != "read_file" {
		t.Fatalf("keys = %v, %v", got, err)
	}
	// The checklist has written its last output (the cursor shown again)
	// before returning; the terminal may not have delivered it yet.
	tp.WaitFor(showCursor)
	out := tp.Output()
	if q := termQuery.FindString(out); q != "" {
		t.Errorf("the checklist queried the terminal (%q): %q", q, out)
	}
	if !strings.HasPrefix(out, hideCursor) {
		t.Errorf("cursor not hidden first: %q", out)
	}
	if !finalErase.MatchString(out) {
		t.Errorf("checklist not erased at the end: %q", out)
	}
	if !echoOn(t, tp.TTY()) {
		t.Error("terminal not restored")
	}
}

func TestChecklistLeavesTypedAheadInput(t *testing.T) {
	tp := openPTY(t)
	p := printerOn(tp)
	ch := run(func() ([]string, error) { return p.Checklist("Select tools", tools(true)) })
	tp.WaitFor("3/3 selected")
	tp.Press(testpty.KeyDown + " " + testpty.KeyEnter + "next answer\n")
	got, err := wait(t, ch)
	if err != nil || strings.Join(got, ",") != "read_file,list_dir" {
		t.Fatalf("keys = %v, %v", got, err)
	}
	v, err := wait(t, run(func() (string, error) { return p.Ask("Next", "") }))
	if err != nil || v != "next answer" {
		t.Errorf("Ask after Checklist = %q, %v", v, err)
	}
}

func TestChecklistScrollsInASmallTerminal(t *testing.T) {
	tp := openPTY(t)
	// 10 rows: title, help, two blank lines and the footer leave 5 rows.
	tp.Resize(10, 60)
	items := manyItems(30)
	for i := range items {
		items[i].Checked = true
	}
	p := printerOn(tp)
	ch := run(func() ([]string, error) { return p.Checklist("Select tools", items) })
	tp.WaitFor("30/30 selected · 1–5 of 30")
	tp.Press("G", " ")
	tp.WaitFor("29/30 selected · 26–30 of 30")
	tp.Press("\x1b[5~", " ") // pgup: cursor to item 25, shown from 25
	tp.WaitFor("28/30 selected · 25–29 of 30")
	tp.Press("\x1b[H", "\x1bOB", " ") // home, down (application mode)
	tp.WaitFor("27/30 selected · 1–5 of 30")
	tp.Press("\x1b[6~", "\x1b[F", "\x1b[A") // pgdown, end, up
	tp.WaitFor("27/30 selected · 26–30 of 30")
	tp.Press(testpty.KeyEnter)
	got, err := wait(t, ch)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{}
	for i, it := range items {
		if i != 1 && i != 24 && i != 29 {
			want = append(want, it.Key)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("keys = %v\nwant %v", got, want)
	}
	tp.WaitFor(showCursor) // the checklist's last output
	// No frame may be taller than the terminal: no cursor movement up by
	// more than 9 lines.
	for _, up := range regexp.MustCompile(`\x1b\[(\d+)A`).FindAllStringSubmatch(tp.Output(), -1) {
		if len(up[1]) > 1 || up[1] > "9" {
			t.Errorf("moved up %s lines in a 10-line terminal", up[1])
		}
	}
}

func TestChecklistEscapeSequencesDoNotCancel(t *testing.T) {
	// Every key but the last starts with ESC; only the lone ESC cancels.
	tp := openPTY(t)
	p := printerOn(tp)
	ch := run(func() ([]string, error) { return p.Checklist("Select tools", tools(true)) })
	tp.WaitFor("3/3 selected")
	tp.Press(testpty.KeyDown, "\x1b[C", "\x1b[D", "\x1b[1;5B", testpty.KeyUp)
	tp.Press(" ")
	tp.WaitFor("2/3 selected")
	tp.Press(testpty.KeyEsc)
	if _, err := wait(t, ch); !errors.Is(err, ErrCancelled) {
		t.Fatalf("err = %v, want ErrCancelled", err)
	}
}
