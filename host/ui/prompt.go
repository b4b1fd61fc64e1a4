package ui

import (
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/hermes-agent/hermes/host/termsafe"
	"golang.org/x/term"
)

// Confirm asks a yes/no question, printing "  question [Y/n] " (or
// "[y/N] " when defaultYes is false), and reads one line. "y"/"yes" mean
// yes, "n"/"no" mean no; an empty answer, any other answer, the end of input
// or a read error give the default. When the Printer is not interactive it
// returns the default without printing or reading anything.
func (p *Printer) Confirm(question string, defaultYes bool) bool {
	if !p.Interactive() {
		return defaultYes
	}
	question = termsafe.Escape(question)
	hint := "[y/N]"
	if defaultYes {
		hint = "[Y/n]"
	}
	p.write(indent + question + " " + hint + " ")
	line, err := p.readLine()
	if err != nil {
		// The person pressed ctrl-d: end the prompt line ourselves.
		p.write("\n")
		return defaultYes
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	case "n", "no":
		return false
	}
	return defaultYes
}

// Ask prints "  prompt [def]: " (the brackets only when def is not empty)
// and reads one line of visible input. It returns the trimmed answer, or def
// when the answer is empty or the input ended. When the Printer is not
// interactive it returns def without reading, or ErrNotInteractive when def
// is empty.
func (p *Printer) Ask(prompt string, def string) (string, error) {
	if !p.Interactive() {
		if def == "" {
			return "", ErrNotInteractive
		}
		return def, nil
	}
	prompt = termsafe.Escape(prompt)
	text := indent + promptText(prompt)
	if def != "" {
		text = indent + strings.TrimRight(strings.TrimSpace(prompt), ":") + " [" + termsafe.Escape(def) + "]: "
	}
	p.write(text)
	line, err := p.readLine()
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	if errors.Is(err, io.EOF) && line == "" {
		p.write("\n")
	}
	if v := strings.TrimSpace(line); v != "" {
		return v, nil
	}
	return def, nil
}

// Secret prints "  prompt: " and reads a line without echoing it, for API
// keys and tokens. Backspace and ctrl-u edit the input, ctrl-c cancels
// (ErrCancelled), ctrl-d on an empty line ends the input (io.EOF). The
// terminal state is restored before returning. The answer is trimmed of
// surrounding spaces. It returns ErrNotInteractive when the Printer is not
// interactive.
func (p *Printer) Secret(prompt string) (string, error) {
	if !p.Interactive() {
		return "", ErrNotInteractive
	}
	fd, _ := fdOf(p.in)
	state, err := term.MakeRaw(fd)
	if err != nil {
		return "", err
	}
	// Raw mode also turns off output post-processing, so no newline is
	// written until the terminal is restored.
	p.write(indent + promptText(termsafe.Escape(prompt)))
	value, readErr := readHidden(p.in)
	restoreErr := term.Restore(fd, state)
	p.write("\n")
	if readErr != nil {
		return "", readErr
	}
	if restoreErr != nil {
		return "", restoreErr
	}
	return strings.TrimSpace(value), nil
}

// promptText returns prompt ending in ": ".
func promptText(prompt string) string {
	return strings.TrimRight(strings.TrimSpace(prompt), ":") + ": "
}

// readLine reads bytes up to a newline one at a time, so that nothing past
// the line is consumed from the shared input. The newline and a trailing
// carriage return are dropped. At the end of input it returns what was read
// with io.EOF.
func (p *Printer) readLine() (string, error) {
	var buf []byte
	var one [1]byte
	for {
		n, err := p.in.Read(one[:])
		if n == 1 {
			if one[0] == '\n' {
				return strings.TrimSuffix(string(buf), "\r"), nil
			}
			buf = append(buf, one[0])
			continue
		}
		if err != nil {
			return string(buf), err
		}
	}
}

// readHidden reads a line from a terminal in raw mode, byte by byte,
// handling the editing keys itself. Escape sequences (arrow keys and the
// like) are ignored.
func readHidden(in io.Reader) (string, error) {
	const (
		escNone = iota
		escStart
		escSeq
	)
	var buf []byte
	var one [1]byte
	esc := escNone
	for {
		n, err := in.Read(one[:])
		if n == 0 {
			if err == nil {
				continue
			}
			return "", err
		}
		c := one[0]
		switch esc {
		case escStart:
			if c == '[' || c == 'O' {
				esc = escSeq
				continue
			}
			esc = escNone
		case escSeq:
			if c >= 0x40 && c <= 0x7e {
				esc = escNone
			}
			continue
		}
		switch {
		case c == '\r' || c == '\n':
			return string(buf), nil
		case c == 0x03: // ctrl-c
			return "", ErrCancelled
		case c == 0x04: // ctrl-d
			if len(buf) == 0 {
				return "", io.EOF
			}
		case c == 0x7f || c == 0x08: // backspace
			if len(buf) > 0 {
				_, size := utf8.DecodeLastRune(buf)
				buf = buf[:len(buf)-size]
			}
		case c == 0x15: // ctrl-u
			buf = buf[:0]
		case c == 0x1b:
			esc = escStart
		case c < 0x20:
			// Other control characters are ignored.
		default:
			buf = append(buf, c)
		}
	}
}
