package termsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct{ name, in, line, text string }{
		{"empty", "", "", ""},
		{"plain", "read_file: reads a file", "read_file: reads a file", "read_file: reads a file"},
		{"unicode", "café ✓ 日本 – ok", "café ✓ 日本 – ok", "café ✓ 日本 – ok"},
		{"backslash kept", `C:\x1b\tmp`, `C:\x1b\tmp`, `C:\x1b\tmp`},
		{"clear screen", "a\x1b[2Jb", `a\x1b[2Jb`, `a\x1b[2Jb`},
		{"window title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
		{"clipboard OSC 52", "\x1b]52;c;Y3VybCBldmlsfHNo\x1b\\", `\x1b]52;c;Y3VybCBldmlsfHNo\x1b\`, `\x1b]52;c;Y3VybCBldmlsfHNo\x1b\`},
		{"carriage return", "ok\r✓ fake", `ok\r✓ fake`, `ok\r✓ fake`},
		{"newline and tab", "a\nb\tc", `a\nb\tc`, "a\nb\tc"},
		{"crlf", "one\r\ntwo", `one\r\ntwo`, "one\ntwo"},
		{"lone cr before text", "\rx", `\rx`, `\rx`},
		{"cr at end", "x\r", `x\r`, `x\r`},
		{"nul bel bs del", "\x00\x07\x08\x7f", `\x00\x07\x08\x7f`, `\x00\x07\x08\x7f`},
		{"C1 CSI and NEL", "a\u009b2Jb\u0085c", `a\u009b2Jb\u0085c`, `a\u009b2Jb\u0085c`},
		{"bidi override", "safe\u202etxt.exe", `safe\u202etxt.exe`, `safe\u202etxt.exe`},
		{"bidi isolates", "\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`, `\u2066\u2067\u2068\u2069`},
		{"bidi embeddings", "\u202a\u202b\u202c\u202d", `\u202a\u202b\u202c\u202d`, `\u202a\u202b\u202c\u202d`},
		{"bidi marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`, `\u200e\u200f\u061c`},
		{"line separators", "a\u2028b\u2029c", `a\u2028b\u2029c`, `a\u2028b\u2029c`},
		{"invalid utf-8", "a\x9bb\xffc", `a\x9bb\xffc`, `a\x9bb\xffc`},
		{"truncated rune", "ok\xe2\x80", `ok\xe2\x80`, `ok\xe2\x80`},
		{"neighbours kept", "\u00a0\u00a9\u2027\u202f\u2065\u206a", "\u00a0\u00a9\u2027\u202f\u2065\u206a", "\u00a0\u00a9\u2027\u202f\u2065\u206a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Escape(tt.in); got != tt.line {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.line)
			}
			if got := EscapeText(tt.in); got != tt.text {
				t.Errorf("EscapeText(%q) = %q, want %q", tt.in, got, tt.text)
			}
		})
	}
}

// Text without anything to escape is returned as it is, without copying.
func TestEscapeUnchangedDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("plain text, ünïcode ✓ ", 20)
	if n := testing.AllocsPerRun(100, func() { _ = Escape(s); _ = EscapeText(s + "\n") }); n > 1 {
		t.Errorf("%v allocations for safe text", n)
	}
}

func TestJSON(t *testing.T) {
	v := map[string]string{
		"esc":   "\x1b]0;t\x07",
		"bidi":  "a\u202eb\u2066c",
		"c1":    "\u009b2J\u0085",
		"sep":   "x\u2028y",
		"del":   "z\x7f",
		"plain": "ok ✓",
	}
	enc, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got := JSON(enc)
	for _, bad := range []string{"\x1b", "\u202e", "\u2066", "\u009b", "\u0085", "\u2028", "\x7f"} {
		if bytes.Contains(got, []byte(bad)) {
			t.Errorf("JSON output %q still holds %q", got, bad)
		}
	}
	for _, want := range []string{`\u202e`, `\u2066`, `\u009b`, `\u0085`, `\u007f`, "ok ✓"} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("JSON output %q lacks %q", got, want)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("escaped JSON does not decode: %v\n%s", err, got)
	}
	for k, want := range v {
		if back[k] != want {
			t.Errorf("%s decodes to %q, want %q", k, back[k], want)
		}
	}
	indented := []byte("{\n\t\"a\": \"b\"\n}\n")
	if out := JSON(indented); &out[0] != &indented[0] || !bytes.Equal(out, indented) {
		t.Errorf("safe JSON was changed or copied: %q", out)
	}
	if got := JSON([]byte("\"a\xffb\"")); string(got) != `"a\ufffdb"` {
		t.Errorf("invalid UTF-8: %q", got)
	}
}

func TestLogWriter(t *testing.T) {
	var buf bytes.Buffer
	w := LogWriter(&buf)
	entries := []string{
		"2024-01-01T00:00:00Z [INFO]  hermes.srv: MCP server log [srv/evil\n2024-01-01T00:00:00Z [ERROR] forged]: data\x1b[2J\n",
		"plain entry\n",
		"no newline at all",
	}
	for _, e := range entries {
		n, err := w.Write([]byte(e))
		if err != nil || n != len(e) {
			t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(e))
		}
	}
	want := `2024-01-01T00:00:00Z [INFO]  hermes.srv: MCP server log [srv/evil\n2024-01-01T00:00:00Z [ERROR] forged]: data\x1b[2J` + "\n" +
		"plain entry\n" +
		"no newline at all"
	if buf.String() != want {
		t.Errorf("log:\n%q\nwant\n%q", buf.String(), want)
	}
}

// checkSafe fails when out holds anything a terminal could act on. In
// multi-line text, newlines and tabs are allowed.
func checkSafe(t *testing.T, in, out string, multiline bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("escape(%q) = %q is not valid UTF-8", in, out)
	}
	for _, r := range out {
		switch {
		case multiline && (r == '\n' || r == '\t'):
		case r < 0x20 || r == 0x7f || unsafeRune(r):
			t.Fatalf("escape(%q) = %q still holds %U", in, out, r)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{
		"", "plain", "a\x1b[31mred\x1b[0m", "\x1b]52;c;AAAA\x07", "x\r\ny\rz\n\t",
		"\u202eevil\u2069", "\u009b1;1H", "\xff\xfe\x9b", "ok\xe2\x80", "a\\x1b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line, text := Escape(s), EscapeText(s)
		checkSafe(t, s, line, false)
		checkSafe(t, s, text, true)
		if strings.Contains(line, "\n") {
			t.Fatalf("Escape(%q) = %q spans lines", s, line)
		}
		// Text that is already safe is left alone, and escaping twice
		// changes nothing more.
		if Escape(line) != line || EscapeText(text) != text {
			t.Fatalf("escaping %q is not idempotent: %q, %q", s, line, text)
		}
		if firstUnsafe(s, false) < 0 && line != s {
			t.Fatalf("safe %q changed to %q", s, line)
		}
		// Lines survive in multi-line text: as many newlines as the input
		// had.
		if strings.Count(text, "\n") != strings.Count(s, "\n") {
			t.Fatalf("EscapeText(%q) = %q changed the line count", s, text)
		}
		// JSON-encoded, the text still decodes to itself after JSON.
		enc, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		safe := JSON(enc)
		checkSafe(t, string(enc), string(safe), false)
		var back string
		if err := json.Unmarshal(safe, &back); err != nil {
			t.Fatalf("JSON(%q) = %q does not decode: %v", enc, safe, err)
		}
		if want := strings.ToValidUTF8(s, "\ufffd"); back != want && utf8.ValidString(s) {
			t.Fatalf("JSON(%q) decodes to %q, want %q", enc, back, want)
		}
		var lw bytes.Buffer
		if _, err := LogWriter(&lw).Write([]byte(s + "\n")); err != nil {
			t.Fatal(err)
		}
		if got := lw.String(); strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "\n") {
			t.Fatalf("LogWriter wrote %q for one entry %q", got, s)
		}
	})
}
