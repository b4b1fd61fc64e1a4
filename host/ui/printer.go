package ui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"

	"github.com/hermes-agent/hermes/host/termsafe"
	"golang.org/x/term"
)

// ErrNotInteractive is returned by prompts that need a person at a terminal
// when the input or the output is not a terminal.
var ErrNotInteractive = errors.New("not an interactive terminal")

// ErrCancelled is returned when the person cancels a prompt (ESC or ctrl-c).
var ErrCancelled = errors.New("cancelled")

// indent is the left margin of every line the Printer writes.
const indent = "  "

// ANSI styles.
const (
	styleReset  = "\x1b[0m"
	styleBold   = "\x1b[1m"
	styleDim    = "\x1b[2m"
	styleRed    = "\x1b[31m"
	styleGreen  = "\x1b[32m"
	styleYellow = "\x1b[33m"
	styleCyan   = "\x1b[36m"
)

// Status glyphs.
const (
	glyphOK   = "✓"
	glyphWarn = "⚠"
	glyphFail = "✗"
)

// Printer writes styled lines to an output stream and reads answers from an
// input stream. Its methods are safe for concurrent use, but prompts should
// not run concurrently with each other.
type Printer struct {
	out    io.Writer
	errOut io.Writer
	in     io.Reader

	color    bool // colour on out
	errColor bool // colour on errOut
	inTTY    bool
	outTTY   bool
	// getenv reads NO_COLOR, TERM and COLUMNS.
	getenv func(string) string

	mu sync.Mutex
	// held gathers the output's writes while a Hold lasts.
	held *strings.Builder
}

// New returns a Printer writing to out (and errors to errOut) and reading
// from in. Colour is enabled for a stream only when it is a terminal,
// NO_COLOR is unset or empty, and TERM is not "dumb". Nil streams are
// replaced by io.Discard or an empty reader.
func New(out, errOut io.Writer, in io.Reader) *Printer {
	return NewEnv(out, errOut, in, os.Getenv)
}

// NewEnv is New with the environment (NO_COLOR, TERM, COLUMNS) read
// through getenv instead of the process's.
func NewEnv(out, errOut io.Writer, in io.Reader, getenv func(string) string) *Printer {
	if out == nil {
		out = io.Discard
	}
	if errOut == nil {
		errOut = io.Discard
	}
	if in == nil {
		in = strings.NewReader("")
	}
	p := &Printer{out: out, errOut: errOut, in: in, getenv: getenv}
	p.inTTY = isTerminal(in)
	p.outTTY = isTerminal(out)
	p.color = p.outTTY && colorAllowed(getenv)
	p.errColor = isTerminal(errOut) && colorAllowed(getenv)
	return p
}

// fdHolder is implemented by *os.File and other file-backed streams.
type fdHolder interface {
	Fd() uintptr
}

// fdOf returns the file descriptor behind v, if any.
func fdOf(v any) (int, bool) {
	f, ok := v.(fdHolder)
	if !ok {
		return 0, false
	}
	if file, isFile := v.(*os.File); isFile && file == nil {
		return 0, false
	}
	return int(f.Fd()), true
}

func isTerminal(v any) bool {
	fd, ok := fdOf(v)
	return ok && term.IsTerminal(fd)
}

func colorAllowed(getenv func(string) string) bool {
	if getenv("NO_COLOR") != "" {
		return false
	}
	return getenv("TERM") != "dumb"
}

// Interactive reports whether both the input and the output are terminals,
// that is whether a person can answer prompts.
func (p *Printer) Interactive() bool {
	return p.inTTY && p.outTTY
}

// Color reports whether the Printer styles its output with colours.
func (p *Printer) Color() bool {
	return p.color
}

// Out returns the output stream, for callers that need to write raw data
// (for example JSON).
func (p *Printer) Out() io.Writer {
	return p.out
}

// The messages of OK, Warn, Fail, Info, Line and Errorf are formatted from
// a format that is the caller's own text and arguments that are data: a
// server's name, a tool's description, an error a server sent. Data never
// controls the terminal and never starts a line of its own: every string,
// error or fmt.Stringer argument is shown on one line with its control
// characters, escape sequences and bidirectional overrides visibly escaped
// (termsafe.Escape). The format's own newlines still break lines, and
// whatever the message holds after formatting is escaped the same way
// except for newlines and tabs (termsafe.EscapeText). The Printer's own
// colours are added after that, so they are the only escape sequences
// written.

// OK prints a success line: "  ✓ message" in green.
func (p *Printer) OK(format string, args ...any) {
	p.status(glyphOK, styleGreen, message(format, args))
}

// Warn prints a warning line: "  ⚠ message" in yellow.
func (p *Printer) Warn(format string, args ...any) {
	p.status(glyphWarn, styleYellow, message(format, args))
}

// Fail prints a failure line: "  ✗ message" in red.
func (p *Printer) Fail(format string, args ...any) {
	p.status(glyphFail, styleRed, message(format, args))
}

// Info prints an informational line: "  message", dimmed.
func (p *Printer) Info(format string, args ...any) {
	p.writeBlock(p.out, indent, indent, styleDim, p.color, message(format, args))
}

// Line prints a plain indented line: "  message". An empty message prints an
// empty line.
func (p *Printer) Line(format string, args ...any) {
	p.writeBlock(p.out, indent, indent, "", false, message(format, args))
}

// Header prints an indented bold heading such as "  MCP Servers:".
func (p *Printer) Header(s string) {
	p.writeBlock(p.out, indent, indent, styleBold, p.color, termsafe.EscapeText(s))
}

// message formats a message for the terminal: each string-like argument
// escaped on one line, the whole result escaped but for newlines and tabs.
func message(format string, args []any) string {
	if len(args) == 0 {
		return termsafe.EscapeText(format)
	}
	safe := make([]any, len(args))
	for i, a := range args {
		safe[i] = safeArg(a)
	}
	return termsafe.EscapeText(fmt.Sprintf(format, safe...))
}

// safeArg returns a with the text it formats to escaped: strings (also of
// named string types), errors, fmt.Stringers and string slices. Numbers,
// also those with a String method such as time.Duration, are returned as
// they are, so that %d still formats them; their text is the program's.
func safeArg(a any) any {
	if a == nil {
		return a
	}
	switch reflect.ValueOf(a).Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return a
	}
	switch v := a.(type) {
	case string:
		return termsafe.Escape(v)
	case error:
		return termsafe.Escape(v.Error())
	case fmt.Stringer:
		return termsafe.Escape(v.String())
	case []string:
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = termsafe.Escape(s)
		}
		return out
	}
	if rv := reflect.ValueOf(a); rv.Kind() == reflect.String {
		return termsafe.Escape(rv.String())
	}
	return a
}

// Errorf prints a one-line error message to the error stream, without
// indentation, in red when that stream is a colour terminal. Like every
// message it is escaped (see OK); a newline in it becomes a space.
func (p *Printer) Errorf(format string, args ...any) {
	safe := make([]any, len(args))
	for i, a := range args {
		safe[i] = safeArg(a)
	}
	msg := strings.ReplaceAll(strings.TrimRight(fmt.Sprintf(format, safe...), "\n"), "\n", " ")
	msg = termsafe.Escape(msg)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.errColor {
		fmt.Fprint(p.errOut, styleRed+msg+styleReset+"\n")
		return
	}
	fmt.Fprint(p.errOut, msg+"\n")
}

// status prints "  <glyph> message"; continuation lines of a multi-line
// message are aligned under the message text.
func (p *Printer) status(glyph, style, msg string) {
	p.writeBlock(p.out, indent+glyph+" ", indent+"  ", style, p.color, msg)
}

// writeBlock writes msg line by line: the first line after first, the
// others after rest. Empty lines stay empty. The whole line (margin
// excluded) is wrapped in style when colour is on.
func (p *Printer) writeBlock(w io.Writer, first, rest, style string, color bool, msg string) {
	var b strings.Builder
	lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	if w == p.out {
		// On a terminal a long line breaks between words, never inside
		// one, its continuation aligned under the text.
		if width := p.Width(); width > 0 {
			lines = wrapLines(lines, width-DisplayWidth(first), width-DisplayWidth(rest))
		}
	}
	for i, line := range lines {
		prefix := rest
		if i == 0 {
			prefix = first
		}
		if line == "" && (i > 0 || strings.TrimSpace(prefix) == "") {
			b.WriteString("\n")
			continue
		}
		// The margin itself is never styled.
		margin := prefix[:len(prefix)-len(strings.TrimLeft(prefix, " "))]
		body := prefix[len(margin):] + line
		b.WriteString(margin)
		if color && style != "" {
			b.WriteString(style + body + styleReset)
		} else {
			b.WriteString(body)
		}
		b.WriteString("\n")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if w == p.out && p.held != nil {
		p.held.WriteString(b.String())
		return
	}
	_, _ = io.WriteString(w, b.String())
}

// Hold gathers what is written to the output until the returned function
// is called, which writes it in one piece: a listing of many lines costs
// one system call, not one per line. A Hold within a Hold adds nothing.
// Call it for output only, not around a prompt.
func (p *Printer) Hold() (release func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held != nil {
		return func() {}
	}
	p.held = &strings.Builder{}
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.held != nil {
			_, _ = io.WriteString(p.out, p.held.String())
			p.held = nil
		}
	}
}

// paint wraps s in style when colour is on.
func (p *Printer) paint(style, s string) string {
	if !p.color || style == "" || s == "" {
		return s
	}
	return style + s + styleReset
}

// write writes s to the output as is.
func (p *Printer) write(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held != nil {
		p.held.WriteString(s)
		return
	}
	_, _ = io.WriteString(p.out, s)
}

// wrapLines breaks each line longer than its room at spaces: the first
// line of the block has firstRoom cells, the others room. A word longer
// than the room stays whole on its own line. One pass over each line: a
// server's text may be long.
func wrapLines(lines []string, firstRoom, room int) []string {
	if firstRoom < minWrap || room < minWrap {
		return lines
	}
	var out []string
	for i, line := range lines {
		avail := room
		if i == 0 {
			avail = firstRoom
		}
		start := 0        // byte index where the current output line starts
		width := 0        // its width so far
		space := -1       // byte index of its last space
		widthAtSpace := 0 // its width up to that space
		for j, r := range line {
			if r == ' ' && j > start {
				if width > avail && space < 0 {
					// A word longer than the room: break after it.
					out = append(out, line[start:j])
					start, width, space = j+1, 0, -1
					avail = room
					continue
				}
				space, widthAtSpace = j, width
			}
			width += widthCond.RuneWidth(r)
			if width > avail && space >= 0 {
				out = append(out, strings.TrimRight(line[start:space], " "))
				width -= widthAtSpace + 1
				start, space = space+1, -1
				avail = room
			}
		}
		out = append(out, line[start:])
	}
	return out
}

// minWrap is the narrowest room a line is wrapped to.
const minWrap = 20
