package ui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/hermes-agent/hermes/host/termsafe"
	"golang.org/x/term"
)

// ProgressLine is one live line on a terminal: each Show rewrites it in
// place (carriage return, erase line), cut to the terminal's width, its
// text escaped; Clear erases it. On a stream that is not a terminal it
// writes nothing, so piped output stays clean. Show may be called from
// any goroutine and returns at once (the latest text is written by a
// goroutine of the line's own): a connection's reader never waits on the
// terminal.
type ProgressLine struct {
	w     io.Writer
	width func() int
	on    bool

	mu      sync.Mutex
	text    string
	dirty   bool
	shown   bool
	closed  bool
	kick    chan struct{}
	stopped chan struct{}
}

// NewProgressLine returns the live line of w (normally stderr); it is
// off unless w is a terminal.
func NewProgressLine(w io.Writer) *ProgressLine {
	l := &ProgressLine{w: w, kick: make(chan struct{}, 1), stopped: make(chan struct{})}
	fd, ok := fdOf(w)
	l.on = ok && term.IsTerminal(fd)
	l.width = func() int {
		if cols, _, err := term.GetSize(fd); err == nil && cols > 0 {
			return cols
		}
		return 80
	}
	if l.on {
		go l.run()
	} else {
		close(l.stopped)
	}
	return l
}

// On reports whether the line is shown (w is a terminal).
func (l *ProgressLine) On() bool { return l.on }

// Show replaces the line's text (a server's words: escaped here).
func (l *ProgressLine) Show(text string) {
	if !l.on {
		return
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.text, l.dirty = text, true
	// Under the lock: Close closes kick under it.
	select {
	case l.kick <- struct{}{}:
	default:
	}
	l.mu.Unlock()
}

func (l *ProgressLine) run() {
	defer close(l.stopped)
	for range l.kick {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return
		}
		if l.dirty {
			// Written under the lock: Clear waits for a line in flight.
			l.write()
		}
		l.mu.Unlock()
	}
}

// write shows l.text; l.mu is held.
func (l *ProgressLine) write() {
	room := max(l.width()-1, 8)
	fmt.Fprint(l.w, "\r\x1b[K"+Truncate(termsafe.Escape(l.text), room, "…"))
	l.shown, l.dirty = true, false
}

// Clear erases the line if it was shown; the line can be shown again.
func (l *ProgressLine) Clear() {
	if !l.on {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dirty {
		// The latest text is shown before it goes, however fast the call
		// ended.
		l.write()
	}
	if l.shown {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.shown = false
	}
}

// Close clears the line and stops its writer.
func (l *ProgressLine) Close() {
	l.Clear()
	l.mu.Lock()
	if !l.closed && l.on {
		l.closed = true
		close(l.kick)
	}
	l.closed = true
	l.mu.Unlock()
	<-l.stopped
}

// ProgressText is the line shown for a progress notification of what
// (a tool's name): "what: 3/10 (30%) message", or "what: 3 message"
// when the total is unknown.
func ProgressText(what string, progress, total float64, message string) string {
	var b strings.Builder
	b.WriteString(what)
	b.WriteString(": ")
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	if total > 0 {
		fmt.Fprintf(&b, "%s/%s (%d%%)", num(progress), num(total), int(min(progress/total, 1)*100))
	} else {
		b.WriteString(num(progress))
	}
	if message != "" {
		b.WriteString(" ")
		b.WriteString(message)
	}
	return b.String()
}
