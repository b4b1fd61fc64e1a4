package ui

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestReadKey(t *testing.T) {
	cases := []struct {
		in   string
		more bool // what the ESC timeout check answers
		want []string
	}{
		{"\x1b", false, []string{"esc"}},
		{"\x1b[A\x1b[B\x1b[C\x1b[D", true, []string{"up", "down", "right", "left"}},
		{"\x1bOA\x1bOB\x1bOH\x1bOF", true, []string{"up", "down", "home", "end"}},
		{"\x1b[H\x1b[F\x1b[1~\x1b[4~\x1b[7~\x1b[8~", true, []string{"home", "end", "home", "end", "home", "end"}},
		{"\x1b[5~\x1b[6~\x1b[Z\x1b[1;5A", true, []string{"pgup", "pgdown", "shift+tab", "up"}},
		{"\x1b\x1b", true, []string{"esc"}},
		{"\x1bj", true, []string{""}},
		{"\x1b[200~", true, []string{""}},
		{"\r\n\t \x03\x10\x0e\x15\x04", false, []string{"enter", "enter", "tab", " ", "ctrl+c", "ctrl+p", "ctrl+n", "ctrl+u", "ctrl+d"}},
		{"jkgGxa\x7fé", false, []string{"j", "k", "g", "G", "x", "a", "", "", ""}},
	}
	for _, c := range cases {
		r := strings.NewReader(c.in)
		var got []string
		for {
			k, err := readKey(r, func() bool { return c.more })
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%q: %v", c.in, err)
			}
			got = append(got, k)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%q: keys %q, want %q", c.in, got, c.want)
		}
	}
}

func TestReadKeyReadsOnlyTheKey(t *testing.T) {
	r := strings.NewReader("\x1b[B\rrest")
	for _, want := range []string{"down", "enter"} {
		if k, err := readKey(r, func() bool { return true }); k != want || err != nil {
			t.Fatalf("key %q, %v; want %q", k, err, want)
		}
	}
	if rest, _ := io.ReadAll(r); string(rest) != "rest" {
		t.Errorf("left %q, want %q", rest, "rest")
	}
}

func manyItems(n int) []ChecklistItem {
	items := make([]ChecklistItem, n)
	for i := range items {
		items[i] = ChecklistItem{
			Key:         fmt.Sprintf("tool_%02d", i),
			Description: strings.Repeat("a long description ", 10),
			Checked:     i%2 == 0,
		}
	}
	return items
}

// TestChecklistFitsTheTerminal checks that a frame is never taller than
// the terminal nor as wide as it, that the cursor stays visible, and that
// the footer tells which items are shown.
func TestChecklistFitsTheTerminal(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 40} {
		for _, title := range []string{"", "Select tools"} {
			for height := 2; height <= 26; height++ {
				for _, width := range []int{10, 80} {
					m := newChecklistModel(title, manyItems(n), true)
					m.width, m.height = width, height
					for _, key := range []string{"", "G", "pgup", "up", "g", "pgdown", "down"} {
						m.update(key)
						lines := m.view()
						if len(lines) > height {
							t.Fatalf("n=%d height=%d: %d lines", n, height, len(lines))
						}
						for _, l := range lines {
							if w := DisplayWidth(l); w >= width {
								t.Fatalf("n=%d width=%d: line %q is %d wide", n, width, l, w)
							}
						}
						rows := m.layout().rows
						if m.cursor < m.offset || m.cursor >= m.offset+rows {
							t.Fatalf("n=%d height=%d after %q: cursor %d outside %d+%d", n, height, key, m.cursor, m.offset, rows)
						}
						footer := stripANSI(lines[len(lines)-1])
						if rows < n && !strings.HasSuffix(footer, "…") && !strings.Contains(footer, fmt.Sprintf("%d–%d of %d", m.offset+1, m.offset+rows, n)) {
							t.Fatalf("footer %q, offset %d rows %d", footer, m.offset, rows)
						}
					}
				}
			}
		}
	}
}

func TestChecklistLayoutFullHeight(t *testing.T) {
	m := newChecklistModel("Title", manyItems(40), false)
	m.width, m.height = 80, 24
	l := m.layout()
	if !l.title || !l.help || !l.blanks || l.rows != 19 || l.lines() != 24 {
		t.Errorf("layout %+v", l)
	}
	m.height = 0
	if l := m.layout(); l.rows != 15 || !l.help {
		t.Errorf("unknown height: layout %+v", l)
	}
}

func TestChecklistFrameRedrawsInPlace(t *testing.T) {
	m := newChecklistModel("Title", manyItems(3), false)
	m.width, m.height = 80, 24
	first := m.frame()
	if strings.Contains(first, "A\x1b") || !strings.HasPrefix(first, "\r"+eraseLine+"  Title") {
		t.Errorf("first frame %q", first)
	}
	if strings.Count(first, "\r\n") != 8-1 {
		t.Errorf("first frame has %d line breaks: %q", strings.Count(first, "\r\n"), first)
	}
	m.update("x")
	second := m.frame()
	if !strings.HasPrefix(second, "\r\x1b[7A"+eraseLine) || !strings.HasSuffix(second, "1/3 selected"+eraseBelow) {
		t.Errorf("second frame %q", second)
	}
	if got := m.erase(); got != "\r\x1b[7A"+eraseBelow {
		t.Errorf("erase %q", got)
	}
	if got := m.erase(); got != "" {
		t.Errorf("second erase %q", got)
	}
}

// A server's tool names and descriptions are data in the checklist: escape
// sequences, carriage returns and bidi overrides in them are shown escaped,
// so the only control sequences in a frame are the checklist's own.
func TestChecklistEscapesItems(t *testing.T) {
	items := []ChecklistItem{
		{Key: "evil\x1b]0;title\x07", Description: "clears\x1b[2J the screen\r✓ fake", Checked: true},
		{Key: "rlo\u202etxt", Label: "", Description: "osc52 \x1b]52;c;AAAA\x07"},
	}
	m := newChecklistModel("Tools for 'x\x1b[5m'", items, false)
	m.width, m.height = 200, 24
	frame := m.frame()
	own := strings.NewReplacer(eraseLine, "", eraseBelow, "", "\r\n", "\n").Replace(frame)
	own = strings.TrimPrefix(own, "\r")
	if strings.ContainsAny(own, "\x1b\r\x07\u202e") {
		t.Fatalf("frame carries control characters from the items: %q", own)
	}
	for _, want := range []string{`evil\x1b]0;title\x07`, `clears\x1b[2J the screen ✓ fake`, `rlo\u202etxt`, `osc52 \x1b]52;c;AAAA\x07`, `Tools for 'x\x1b[5m'`} {
		if !strings.Contains(own, want) {
			t.Errorf("frame lacks %q:\n%s", want, own)
		}
	}
	if got := m.selected(); len(got) != 1 || got[0] != items[0].Key {
		t.Errorf("selected %q, want the key as given", got)
	}
}
