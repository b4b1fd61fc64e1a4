package ui

import (
	"bytes"
	"strings"
	"testing"
)

// TestLinesWrapBetweenWords: with a width, a long message breaks between
// words, continuation lines aligned under the text, and no line is wider
// than the width unless one word is.
func TestLinesWrapBetweenWords(t *testing.T) {
	t.Setenv("COLUMNS", "40")
	var out bytes.Buffer
	p := New(&out, nil, nil)
	p.Fail("Connection failed: server %q: ${TOKEN} is not set; set it in the environment or add TOKEN=... to /a/very/long/path/that/does/not/fit/.env", "a")
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("not wrapped:\n%s", out.String())
	}
	for i, l := range lines {
		if DisplayWidth(l) > 40 && strings.Contains(strings.TrimSpace(l), " ") {
			t.Errorf("line %d is %d cells wide: %q", i, DisplayWidth(l), l)
		}
		if i > 0 && !strings.HasPrefix(l, "    ") {
			t.Errorf("continuation %q not aligned under the text", l)
		}
	}
	joined := strings.Join(strings.Fields(out.String()), " ")
	if !strings.Contains(joined, "TOKEN=... to /a/very/long/path/that/does/not/fit/.env") {
		t.Errorf("words were cut: %q", joined)
	}
}

// TestWrapIsLinear: a huge message without spaces (hostile server text)
// or with many is wrapped quickly; a quadratic wrap would not finish.
func TestWrapIsLinear(t *testing.T) {
	t.Setenv("COLUMNS", "60")
	var out bytes.Buffer
	p := New(&out, nil, nil)
	p.Line("%s", strings.Repeat("word ", 200000))
	p.Line("%s", strings.Repeat("x", 1000000))
	if out.Len() < 2000000 {
		t.Fatalf("output %d bytes", out.Len())
	}
}
