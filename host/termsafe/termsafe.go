// Package termsafe makes text that came from outside the program (an MCP
// server's names, descriptions, results and errors, a plugin's log lines)
// safe to print on a terminal and to write to a line-oriented log. Such text
// is data: it must never move the cursor, clear the screen, set the window
// title, write to the clipboard (OSC 52), fake a line with a carriage
// return, or reorder what is shown around it with bidirectional overrides.
//
// Escape is the one function that does this. Every character a terminal
// could act on is replaced by a visible escape, so the person still sees
// that it was there:
//
//	C0 controls and DEL       \x1b, \x07, \x7f (\n, \t and \r by name)
//	C1 controls U+0080–U+009F \u009b
//	bidi controls             \u202e (U+202A–U+202E, U+2066–U+2069,
//	                          U+200E, U+200F, U+061C)
//	line and paragraph sep.   \u2028, \u2029
//	bytes that are not UTF-8  \x9b
//
// Everything else, backslashes included, is left as it is: the escapes make
// the text harmless, they are not meant to be decoded again.
//
// EscapeText keeps newlines and tabs for text meant to span lines (a tool
// result), and LogWriter applies Escape to each line of a log. JSON adds the
// same protection to encoded JSON without changing what it decodes to.
//
// The package has no dependencies beyond the standard library and knows
// nothing about where its text is shown.
package termsafe

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Escape returns s as one line that is safe to print: every control
// character, newlines and tabs included, every bidirectional formatting
// character and every byte that is not valid UTF-8 is shown as a visible
// escape (see the package documentation). Text without such characters is
// returned unchanged.
func Escape(s string) string {
	return escape(s, false)
}

// EscapeText is Escape for text that may span lines: newlines and tabs are
// kept, a "\r\n" line end becomes "\n", and every other control character
// is escaped as Escape does.
func EscapeText(s string) string {
	return escape(s, true)
}

func escape(s string, multiline bool) string {
	i := firstUnsafe(s, multiline)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case multiline && (c == '\n' || c == '\t'):
				b.WriteByte(c)
			case multiline && c == '\r' && i+1 < len(s) && s[i+1] == '\n':
				// CRLF line end: the newline is written next.
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\t':
				b.WriteString(`\t`)
			case c == '\r':
				b.WriteString(`\r`)
			case c < 0x20 || c == 0x7f:
				writeByteEscape(&b, c)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeByteEscape(&b, c)
		case unsafeRune(r):
			writeRuneEscape(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnsafe returns the index of the first byte of s that escape would
// change, or -1.
func firstUnsafe(s string, multiline bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				if !multiline || (c != '\n' && c != '\t') {
					return i
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

// unsafeRune reports whether a non-ASCII rune is one Escape replaces: a C1
// control, a bidirectional formatting character, or a line or paragraph
// separator.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls (CSI is U+009B, OSC U+009D)
		return true
	case r >= 0x202a && r <= 0x202e: // LRE, RLE, PDF, LRO, RLO
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	case r == 0x200e || r == 0x200f || r == 0x061c: // LRM, RLM, ALM
		return true
	case r == 0x2028 || r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

// writeByteEscape writes c as \xNN.
func writeByteEscape(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
}

// writeRuneEscape writes r (below U+10000) as \uNNNN.
func writeRuneEscape(b *strings.Builder, r rune) {
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(r>>shift)&0xf])
	}
}

// JSON returns encoded JSON with the characters a terminal would act on,
// and that encoding/json leaves as they are, written as \u escapes: C1
// controls, bidirectional formatting characters, DEL, and (should the input
// carry any) raw control characters other than newline and tab. A byte that
// is not valid UTF-8 becomes \ufffd, as encoding/json does for strings.
// These characters can only occur inside JSON strings, where a \u escape
// means the same character, so the document decodes to the same values.
// Output without such characters is returned unchanged (the same slice).
func JSON(b []byte) []byte {
	i := firstUnsafeJSON(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				out = appendJSONEscape(out, rune(c))
			} else {
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = appendJSONEscape(out, utf8.RuneError)
		case unsafeRune(r):
			out = appendJSONEscape(out, r)
		default:
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

func firstUnsafeJSON(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

func appendJSONEscape(out []byte, r rune) []byte {
	out = append(out, '\\', 'u')
	for shift := 12; shift >= 0; shift -= 4 {
		out = append(out, hexDigits[(r>>shift)&0xf])
	}
	return out
}

// LogWriter returns a writer for a line-oriented log: each Write is taken
// as one log entry and written to w through Escape, keeping only its final
// newline, so that nothing a logged value carries (a newline in a server's
// log message or logger name, an escape sequence) can start a line of its
// own, forge an entry or control the terminal a mirrored log is shown on.
// Loggers such as hclog write each entry with one Write. The writer adds no
// locking of its own; it is as safe for concurrent use as w.
func LogWriter(w io.Writer) io.Writer {
	return logWriter{w: w}
}

type logWriter struct{ w io.Writer }

func (l logWriter) Write(p []byte) (int, error) {
	body := string(p)
	nl := strings.HasSuffix(body, "\n")
	if nl {
		body = body[:len(body)-1]
	}
	safe := Escape(body)
	if nl {
		safe += "\n"
	}
	if _, err := io.WriteString(l.w, safe); err != nil {
		return 0, err
	}
	return len(p), nil
}
