package screening

import (
	"errors"
	"slices"
	"strings"
	"unicode"
)

// IsShell reports whether command runs one of ShellInterpreters, read as
// the original reads it: the command trimmed, split like a POSIX shell
// (Python's shlex.split; on a quoting error, at white space), its first
// word's base name (after the last "/") lower-cased. "/bin/BASH -e" and
// "'/usr/bin/sh'" are shells; "bash5" and "/bin/" are not.
func IsShell(command string) bool {
	return slices.Contains(ShellInterpreters, commandBase(command))
}

// commandBase is the lower-cased base name of command's first word.
func commandBase(command string) string {
	text := strings.TrimFunc(command, isPySpace)
	if text == "" {
		return ""
	}
	first, err := firstShlexWord(text)
	if err != nil {
		// Python falls back to str.split().
		first = strings.FieldsFunc(text, isPySpace)[0]
	}
	if i := strings.LastIndexByte(first, '/'); i >= 0 {
		first = first[i+1:]
	}
	return asciiLower(first)
}

// asciiLower lower-cases A-Z only. Python's str.lower() maps other letters
// too, but none of them to an ASCII letter that a shell's name has (İ
// lower-cases to "i" plus a combining dot, the Kelvin sign to k), so for
// the comparison with ShellInterpreters this is the same; Go's
// strings.ToLower would wrongly turn "İ" into "i".
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// isPySpace is Python's str.isspace(): Go's unicode.IsSpace plus the
// information separators \x1c-\x1f.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// Errors of firstShlexWord, as Python's shlex raises them.
var (
	errNoClosingQuote = errors.New("no closing quotation")
	errNoEscapedChar  = errors.New("no escaped character")
)

// firstShlexWord returns the first word of shlexSplit(text), or "".
func firstShlexWord(text string) (string, error) {
	words, err := shlexSplit(text)
	if err != nil || len(words) == 0 {
		return "", err
	}
	return words[0], nil
}

// shlexSplit returns shlex.split(text) in POSIX mode
// (whitespace_split, no comments): white space is " \t\r\n"; '...' keeps
// everything; "..." keeps everything but lets a backslash escape " and \
// (before anything else the backslash stays); outside quotes a backslash
// escapes any character. Like shlex.split it reads the whole text, so an
// unclosed quote or a trailing backslash anywhere is an error.
func shlexSplit(text string) ([]string, error) {
	const (
		between = iota // white space between words
		inWord
		inSingle
		inDouble
	)
	var (
		words  []string
		cur    strings.Builder
		state  = between
		quoted bool // the current word had quotes (so "" is a word)
		escape bool // the last character was an unconsumed backslash
	)
	isWS := func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '\n' }
	for _, r := range text {
		if escape {
			// In "...", a backslash escapes only " and \.
			if state == inDouble && r != '"' && r != '\\' {
				cur.WriteByte('\\')
			}
			cur.WriteRune(r)
			escape = false
			if state == between {
				state = inWord
			}
			continue
		}
		switch state {
		case between, inWord:
			switch {
			case isWS(r):
				if state == inWord {
					words = append(words, cur.String())
					cur.Reset()
					quoted = false
				}
				state = between
			case r == '\'':
				state, quoted = inSingle, true
			case r == '"':
				state, quoted = inDouble, true
			case r == '\\':
				escape = true
			default:
				cur.WriteRune(r)
				state = inWord
			}
		case inSingle:
			if r == '\'' {
				state = inWord
			} else {
				cur.WriteRune(r)
			}
		case inDouble:
			switch r {
			case '"':
				state = inWord
			case '\\':
				escape = true
			default:
				cur.WriteRune(r)
			}
		}
	}
	switch {
	case escape:
		return nil, errNoEscapedChar
	case state == inSingle || state == inDouble:
		return nil, errNoClosingQuote
	case state == inWord && (cur.Len() > 0 || quoted):
		words = append(words, cur.String())
	}
	return words, nil
}
