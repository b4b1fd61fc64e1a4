package ui

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// failReader fails the test when anything reads from it.
type failReader struct{ t *testing.T }

func (r failReader) Read([]byte) (int, error) {
	r.t.Error("input was read")
	return 0, io.EOF
}

func TestStatusLinesPlainWithoutTTY(t *testing.T) {
	var out, errOut bytes.Buffer
	p := New(&out, &errOut, strings.NewReader(""))
	if p.Color() || p.Interactive() {
		t.Fatalf("buffer streams: Color=%v Interactive=%v, want false", p.Color(), p.Interactive())
	}
	p.Header("MCP Servers:")
	p.OK("Saved '%s'", "alpha")
	p.Warn("needs Hermes %s", ">=2.0")
	p.Fail("Failed to connect: %v", errors.New("refused"))
	p.Info("Start a new session to use these tools.")
	p.Line("plain %d", 1)
	p.Line("")
	p.OK("two\nlines")
	p.Errorf("Error: server %q not found\n", "x")

	want := "" +
		"  MCP Servers:\n" +
		"  ✓ Saved 'alpha'\n" +
		"  ⚠ needs Hermes >=2.0\n" +
		"  ✗ Failed to connect: refused\n" +
		"  Start a new session to use these tools.\n" +
		"  plain 1\n" +
		"\n" +
		"  ✓ two\n" +
		"    lines\n"
	if got := out.String(); got != want {
		t.Errorf("out:\n%q\nwant:\n%q", got, want)
	}
	if got, want := errOut.String(), "Error: server \"x\" not found\n"; got != want {
		t.Errorf("errOut = %q, want %q", got, want)
	}
	if strings.Contains(out.String()+errOut.String(), "\x1b") {
		t.Error("ANSI escape in non-terminal output")
	}
}

func TestTableGolden(t *testing.T) {
	var out bytes.Buffer
	p := New(&out, io.Discard, nil)
	p.Table(
		[]string{"Name", "Transport", "Tools", "Status"},
		[][]string{
			{"github", "https://api.example.com/mcp", "all", "✓ enabled"},
			{"fs", "npx -y server-filesystem", "3 selected", "✗ disabled"},
			{"日本", "uvx tool", "-1 excluded", "⚠ stale"},
			{"short"},
		},
	)
	want := "" +
		"  Name   Transport                   Tools       Status\n" +
		"  ────── ─────────────────────────── ─────────── ──────────\n" +
		"  github https://api.example.com/mcp all         ✓ enabled\n" +
		"  fs     npx -y server-filesystem    3 selected  ✗ disabled\n" +
		"  日本   uvx tool                    -1 excluded ⚠ stale\n" +
		"  short\n"
	if got := out.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

// Cells are data: an escape sequence in one is shown escaped, and the
// columns are aligned on what is shown.
func TestTableEscapesCells(t *testing.T) {
	var out bytes.Buffer
	p := New(&out, io.Discard, nil)
	p.Table([]string{"A", "B"}, [][]string{{"\x1b[32mok\x1b[0m", "x"}, {"long", "y\rz\u202e"}})
	want := "" +
		"  A                 B\n" +
		"  ───────────────── ──────────\n" +
		`  \x1b[32mok\x1b[0m x` + "\n" +
		`  long              y\rz\u202e` + "\n"
	if got := out.String(); got != want {
		t.Errorf("table:\n%q\nwant:\n%q", got, want)
	}
}

// A server's text handed to the Printer as an argument never controls the
// terminal and never starts a line of its own; the format's newlines do.
func TestMessagesEscapeData(t *testing.T) {
	var out, errOut bytes.Buffer
	p := New(&out, &errOut, nil)
	type state string
	hostile := "evil\x1b]0;title\x07\r✓ fake\nline\u202e"
	p.OK("Server: %s %v", hostile, errors.New("e\x1b[2J"))
	p.Line("  %-12s|", "a\tb")
	p.Warn("%s and %v", state("s\x1b"), []string{"x\ny"})
	p.Info("own\nlines")
	p.Header("H\x1b[5m")
	p.Errorf("failed: %s", "multi\nline\x1b")
	want := "" +
		`  ✓ Server: evil\x1b]0;title\x07\r✓ fake\nline\u202e e\x1b[2J` + "\n" +
		`    a\tb        |` + "\n" +
		`  ⚠ s\x1b and [x\ny]` + "\n" +
		"  own\n  lines\n" +
		`  H\x1b[5m` + "\n"
	if got := out.String(); got != want {
		t.Errorf("out:\n%q\nwant:\n%q", got, want)
	}
	if got, want := errOut.String(), `failed: multi\nline\x1b`+"\n"; got != want {
		t.Errorf("errOut = %q, want %q", got, want)
	}
}

// A raw control character in a format that is not the caller's own text
// (a message built beforehand) is escaped too; newlines still break lines.
func TestMessageFormatEscaped(t *testing.T) {
	var out bytes.Buffer
	New(&out, io.Discard, nil).Line("a\x1b[2J\nb\r")
	if got, want := out.String(), "  a\\x1b[2J\n  b\\r\n"; got != want {
		t.Errorf("out = %q, want %q", got, want)
	}
}

func TestTableEmpty(t *testing.T) {
	var out bytes.Buffer
	New(&out, io.Discard, nil).Table(nil, nil)
	if out.Len() != 0 {
		t.Errorf("empty table printed %q", out.String())
	}
}

func TestNotInteractive(t *testing.T) {
	var out bytes.Buffer
	p := New(&out, io.Discard, failReader{t})
	if !p.Confirm("Remove server 'x'?", true) {
		t.Error("Confirm default yes: got false")
	}
	if p.Confirm("Overwrite?", false) {
		t.Error("Confirm default no: got true")
	}
	if v, err := p.Ask("Name", "def"); v != "def" || err != nil {
		t.Errorf("Ask = %q, %v; want def, nil", v, err)
	}
	if _, err := p.Ask("Name", ""); !errors.Is(err, ErrNotInteractive) {
		t.Errorf("Ask without default: err = %v, want ErrNotInteractive", err)
	}
	if _, err := p.Secret("API key"); !errors.Is(err, ErrNotInteractive) {
		t.Errorf("Secret: err = %v, want ErrNotInteractive", err)
	}
	if _, err := p.Checklist("Tools", []ChecklistItem{{Key: "a"}}); !errors.Is(err, ErrNotInteractive) {
		t.Errorf("Checklist: err = %v, want ErrNotInteractive", err)
	}
	if out.Len() != 0 {
		t.Errorf("non-interactive prompts printed %q", out.String())
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "***",
		"short":                "***",
		"12345678":             "***",
		"123456789":            "***",
		"sk-abcdefghijklmwxyz": "sk***yz",
		"ключ-секрет-значение": "кл***ие",
	} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDisplayWidthAndTruncate(t *testing.T) {
	for s, want := range map[string]int{"✓ enabled": 9, "──": 2, "日本": 4, "\x1b[1mab\x1b[0m": 2, "⚠": 1} {
		if got := DisplayWidth(s); got != want {
			t.Errorf("DisplayWidth(%q) = %d, want %d", s, got, want)
		}
	}
	if got := Truncate("abcdefghij", 6, "..."); got != "abc..." {
		t.Errorf("Truncate = %q", got)
	}
	if got := Truncate("abc", 6, "..."); got != "abc" {
		t.Errorf("Truncate short = %q", got)
	}
}

// Numbers keep their verbs, also those with a String method.
func TestMessageNumbers(t *testing.T) {
	var out bytes.Buffer
	New(&out, io.Discard, nil).Line("%d %s %v %.1f", time.Duration(3), time.Second, 7, 1.5)
	if got, want := out.String(), "  3 1s 7 1.5\n"; got != want {
		t.Errorf("out = %q, want %q", got, want)
	}
}
