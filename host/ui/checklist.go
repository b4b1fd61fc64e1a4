package ui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/termsafe"
	"golang.org/x/term"
)

// ChecklistItem is one row of a Checklist.
type ChecklistItem struct {
	// Key is returned when the item is checked.
	Key string
	// Label is shown for the item; Key is shown when it is empty.
	Label string
	// Description is shown after the label, cut to the terminal width.
	Description string
	// Checked is the initial state.
	Checked bool
}

// escTimeout is how long a lone ESC waits for the rest of an escape
// sequence before it counts as the ESC key itself.
const escTimeout = 50 * time.Millisecond

// Terminal control sequences used to draw the checklist in place.
const (
	hideCursor = "\x1b[?25l"
	showCursor = "\x1b[?25h"
	eraseLine  = "\x1b[2K"
	eraseBelow = "\x1b[J"
)

// Checklist shows an interactive multi-select list in the terminal and
// returns the keys of the checked items in their original order (an empty,
// non-nil slice when none are checked).
//
// Keys: up/down or k/j (also ctrl-p/ctrl-n) move, home/g and end/G jump,
// pgup/pgdown page, SPACE or x toggles the current item, a toggles all
// items, ENTER confirms, ESC or ctrl-c cancels with ErrCancelled. The cursor
// starts on the first item. The list scrolls to fit the terminal height, is
// redrawn in place after every key and is erased when the checklist ends.
//
// The terminal is put in raw mode on the Printer's input for the duration
// and restored before Checklist returns, also when it panics. Input is read
// one byte at a time, so nothing typed after the confirming ENTER is taken
// from the input. It returns ErrNotInteractive when the Printer is not
// interactive.
func (p *Printer) Checklist(title string, items []ChecklistItem) (keys []string, err error) {
	if !p.Interactive() {
		return nil, ErrNotInteractive
	}
	if len(items) == 0 {
		return []string{}, nil
	}
	fd, _ := fdOf(p.in)
	state, err := term.MakeRaw(fd)
	if err != nil {
		return nil, fmt.Errorf("checklist: %w", err)
	}
	m := newChecklistModel(title, items, p.color)
	defer func() {
		p.write(m.erase() + showCursor)
		if rerr := term.Restore(fd, state); rerr != nil && err == nil {
			keys, err = nil, fmt.Errorf("checklist: restoring the terminal: %w", rerr)
		}
	}()
	p.write(hideCursor)
	for {
		m.width, m.height = p.termSize()
		m.scroll()
		p.write(m.frame())
		key, err := readKey(p.in, func() bool { return inputPending(fd, escTimeout) })
		if err != nil {
			return nil, fmt.Errorf("checklist: reading the terminal: %w", err)
		}
		m.update(key)
		switch {
		case m.cancelled:
			return nil, ErrCancelled
		case m.done:
			return m.selected(), nil
		}
	}
}

// termSize returns the size of the output terminal (or of the input one),
// or zeros when it is unknown. It is asked before every redraw, so the list
// follows a resized window at the next key.
func (p *Printer) termSize() (width, height int) {
	for _, v := range []any{p.out, p.in} {
		if fd, ok := fdOf(v); ok {
			if w, h, err := term.GetSize(fd); err == nil && w > 0 && h > 0 {
				return w, h
			}
		}
	}
	return 0, 0
}

// readKey reads one key press from a terminal in raw mode, one byte at a
// time, and names it: "up", "down", "home", "end", "pgup", "pgdown", "tab",
// "shift+tab", "enter", "esc", "ctrl+c" and the like, or the character
// itself for printable ASCII. Keys without a name give "". After an ESC,
// more reports whether further bytes follow soon; when they do not, the key
// is ESC itself, otherwise the bytes are read as an escape sequence.
func readKey(in io.Reader, more func() bool) (string, error) {
	c, err := readByte(in)
	if err != nil {
		return "", err
	}
	switch {
	case c == 0x1b:
		if !more() {
			return "esc", nil
		}
		c, err = readByte(in)
		if err != nil {
			return "", err
		}
		switch c {
		case '[':
			return readCSI(in)
		case 'O': // SS3, sent in application cursor mode
			c, err = readByte(in)
			if err != nil {
				return "", err
			}
			return csiKey(c, ""), nil
		case 0x1b:
			return "esc", nil
		}
		return "", nil // alt+key
	case c == '\r' || c == '\n':
		return "enter", nil
	case c == '\t':
		return "tab", nil
	case c >= 0x01 && c <= 0x1a:
		return "ctrl+" + string(rune('a'+c-1)), nil
	case c >= 0x20 && c < 0x7f:
		return string(rune(c)), nil
	}
	// Other control characters, DEL and the bytes of non-ASCII characters.
	return "", nil
}

// readCSI reads the rest of a control sequence after "ESC [" and names its
// key.
func readCSI(in io.Reader) (string, error) {
	var params []byte
	for range 32 {
		c, err := readByte(in)
		if err != nil {
			return "", err
		}
		if c >= 0x40 && c <= 0x7e {
			return csiKey(c, string(params)), nil
		}
		params = append(params, c)
	}
	return "", nil // not a sequence we know; give up on it
}

// csiKey names the key of a control sequence from its final byte and
// parameters. Modifiers (as in "1;5A", ctrl-up) are ignored.
func csiKey(final byte, params string) string {
	switch final {
	case 'A':
		return "up"
	case 'B':
		return "down"
	case 'C':
		return "right"
	case 'D':
		return "left"
	case 'H':
		return "home"
	case 'F':
		return "end"
	case 'Z':
		return "shift+tab"
	case '~':
		first, _, _ := strings.Cut(params, ";")
		switch n, _ := strconv.Atoi(first); n {
		case 1, 7:
			return "home"
		case 4, 8:
			return "end"
		case 5:
			return "pgup"
		case 6:
			return "pgdown"
		}
	}
	return ""
}

// readByte reads exactly one byte.
func readByte(in io.Reader) (byte, error) {
	var one [1]byte
	for {
		n, err := in.Read(one[:])
		if n == 1 {
			return one[0], nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// checklistModel is the state and the drawing of a Checklist, apart from the
// terminal.
type checklistModel struct {
	title   string
	items   []ChecklistItem
	checked []bool
	color   bool

	cursor int
	offset int // index of the first visible item
	width  int // terminal size, 0 when unknown
	height int

	drawn int // lines of the last frame; the cursor is on its last line

	done      bool
	cancelled bool
}

func newChecklistModel(title string, items []ChecklistItem, color bool) *checklistModel {
	m := &checklistModel{
		title:   title,
		items:   items,
		checked: make([]bool, len(items)),
		color:   color,
	}
	for i, it := range items {
		m.checked[i] = it.Checked
	}
	return m
}

// selected returns the keys of the checked items in order.
func (m *checklistModel) selected() []string {
	keys := []string{}
	for i, it := range m.items {
		if m.checked[i] {
			keys = append(keys, it.Key)
		}
	}
	return keys
}

// update applies a key named by readKey.
func (m *checklistModel) update(key string) {
	switch key {
	case "esc", "ctrl+c":
		m.cancelled = true
		return
	case "enter":
		m.done = true
		return
	case "up", "k", "ctrl+p", "shift+tab":
		m.cursor = max(m.cursor-1, 0)
	case "down", "j", "ctrl+n", "tab":
		m.cursor = min(m.cursor+1, len(m.items)-1)
	case "home", "g":
		m.cursor = 0
	case "end", "G":
		m.cursor = len(m.items) - 1
	case "pgup", "ctrl+u":
		m.cursor = max(m.cursor-m.layout().rows, 0)
	case "pgdown", "ctrl+d":
		m.cursor = min(m.cursor+m.layout().rows, len(m.items)-1)
	case " ", "x":
		m.checked[m.cursor] = !m.checked[m.cursor]
	case "a":
		all := true
		for _, c := range m.checked {
			all = all && c
		}
		for i := range m.checked {
			m.checked[i] = !all
		}
	}
	m.scroll()
}

// checklistLayout says which lines a frame has.
type checklistLayout struct {
	title  bool // the title line
	help   bool // the key help line
	blanks bool // a blank line before and after the rows
	rows   int  // visible items
}

// lines is the height of a frame with this layout; the footer is always
// there.
func (l checklistLayout) lines() int {
	n := l.rows + 1
	if l.title {
		n++
	}
	if l.help {
		n++
	}
	if l.blanks {
		n += 2
	}
	return n
}

// layout fits the frame to the terminal height: at most 15 rows when the
// height is unknown, otherwise as many rows as fit, dropping the blank
// lines, then the help line, then the title when fewer than three rows
// would fit. A frame must never be taller than the terminal, or redrawing
// it in place would not reach its first line.
func (m *checklistModel) layout() checklistLayout {
	n := len(m.items)
	l := checklistLayout{title: m.title != "", help: true, blanks: true}
	if m.height <= 0 {
		l.rows = min(n, 15)
		return l
	}
	want := min(n, 3)
	for _, drop := range []func(){
		func() { l.blanks = false },
		func() { l.help = false },
		func() { l.title = false },
	} {
		if m.height-l.lines() >= want {
			break
		}
		drop()
	}
	l.rows = max(min(n, m.height-l.lines()), 1)
	return l
}

// scroll keeps the cursor inside the visible window.
func (m *checklistModel) scroll() {
	rows := m.layout().rows
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+rows {
		m.offset = m.cursor - rows + 1
	}
	m.offset = max(min(m.offset, len(m.items)-rows), 0)
}

func (m *checklistModel) paint(style, s string) string {
	if !m.color || s == "" {
		return s
	}
	return style + s + styleReset
}

// view returns the lines of the checklist, without line ends. No line is
// wider than the terminal less one column, so that none wraps and the last
// column never holds a pending wrap.
func (m *checklistModel) view() []string {
	width := m.width - 1
	if m.width <= 0 {
		width = 100
	}
	width = max(width, len(indent)+1)
	// Labels, descriptions and the title are data (a server's tool names
	// and descriptions): shown on one line, escaped.
	label := func(it ChecklistItem) string {
		if it.Label != "" {
			return termsafe.Escape(it.Label)
		}
		return termsafe.Escape(it.Key)
	}
	labelWidth := 0
	for _, it := range m.items {
		labelWidth = max(labelWidth, DisplayWidth(label(it)))
	}
	// indent + pointer + box + space before the label.
	const lead = len(indent) + 2 + 3 + 1
	labelWidth = max(min(labelWidth, 40, width-lead), 1)

	l := m.layout()
	var lines []string
	if l.title {
		lines = append(lines, indent+m.paint(styleBold, Truncate(termsafe.Escape(m.title), width-len(indent), "…")))
	}
	if l.help {
		lines = append(lines, indent+m.paint(styleDim, Truncate("↑/↓ move · space toggle · a all · enter confirm · esc cancel", width-len(indent), "…")))
	}
	if l.blanks {
		lines = append(lines, "")
	}
	for i := m.offset; i < m.offset+l.rows && i < len(m.items); i++ {
		it := m.items[i]
		pointer := "  "
		if i == m.cursor {
			pointer = m.paint(styleCyan, ">") + " "
		}
		box := "[ ]"
		if m.checked[i] {
			box = "[" + m.paint(styleGreen, glyphOK) + "]"
		}
		name := padRight(Truncate(label(it), labelWidth, "…"), labelWidth)
		if i == m.cursor {
			name = m.paint(styleBold, name)
		}
		row := indent + pointer + box + " " + name
		// The label and two spaces before the description.
		used := lead + labelWidth + 2
		if desc := termsafe.Escape(strings.Join(strings.Fields(it.Description), " ")); desc != "" && width-used > 5 {
			row += "  " + m.paint(styleDim, Truncate(desc, width-used, "…"))
		}
		lines = append(lines, strings.TrimRight(row, " "))
	}
	if l.blanks {
		lines = append(lines, "")
	}

	count := 0
	for _, c := range m.checked {
		if c {
			count++
		}
	}
	footer := fmt.Sprintf("%d/%d selected", count, len(m.items))
	if l.rows < len(m.items) {
		footer += fmt.Sprintf(" · %d–%d of %d", m.offset+1, m.offset+l.rows, len(m.items))
	}
	lines = append(lines, indent+m.paint(styleDim, Truncate(footer, width-len(indent), "…")))
	return lines
}

// frame returns the output that replaces the last frame with the current
// view: back to the first line of the last frame, then every line erased
// and rewritten, and whatever the last frame had below erased. The cursor
// is left at the end of the last line. Raw mode turns off output
// processing, so lines end in "\r\n".
func (m *checklistModel) frame() string {
	var b strings.Builder
	b.WriteString(m.up())
	lines := m.view()
	for i, line := range lines {
		if i > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString(eraseLine)
		b.WriteString(line)
	}
	b.WriteString(eraseBelow)
	m.drawn = len(lines)
	return b.String()
}

// erase returns the output that removes the last frame, leaving the cursor
// at the start of its first line, where the checklist began.
func (m *checklistModel) erase() string {
	if m.drawn == 0 {
		return ""
	}
	s := m.up() + eraseBelow
	m.drawn = 0
	return s
}

// up returns the output that moves the cursor from the last line of the
// last frame to the start of its first line.
func (m *checklistModel) up() string {
	if m.drawn > 1 {
		return "\r\x1b[" + strconv.Itoa(m.drawn-1) + "A"
	}
	return "\r"
}
