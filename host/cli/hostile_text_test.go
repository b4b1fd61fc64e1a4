package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
)

// terminalControl lists what a hostile server's text must never bring to
// the terminal: ESC (CSI, OSC: clear the screen, set the title, OSC 52
// clipboard writes), BEL, a carriage return that overwrites a line, C1
// controls and bidi overrides.
var terminalControl = []string{"\x1b", "\x07", "\r", "\u009b", "\u202e", "\u2066"}

// noControl fails when out carries any of terminalControl.
func noControl(t *testing.T, what, out string) {
	t.Helper()
	for _, c := range terminalControl {
		if strings.Contains(out, c) {
			t.Errorf("%s carries %q raw:\n%q", what, c, out)
		}
	}
}

// hostileName is a server name (serverInfo.name) that would set the window
// title, hide what follows and reverse the rest of the line.
const hostileName = "evil\x1b]0;pwned\x07\u202e\u009b2J"

// hostileNameShown is how it must look on the terminal.
const hostileNameShown = `evil\x1b]0;pwned\x07\u202e\u009b2J`

// yamlQuote writes s as a double-quoted YAML string, escaping what YAML
// needs escaped.
func yamlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= 0x2028 && r <= 0x206f):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// hostileStdio writes a config with one stdio test server "ts" started
// with args.
func hostileStdio(t *testing.T, args ...string) string {
	t.Helper()
	home := newHome(t)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = yamlQuote(a)
	}
	writeConfig(t, home, "mcp_servers:\n  ts:\n    command: "+testbin.Path(t, "hermes-testserver")+
		"\n    args: ["+strings.Join(quoted, ", ")+"]\n")
	return home
}

// A server's name, version and error text is data: 'mcp test' shows the
// escape sequences and bidi overrides in it visibly escaped, and --json
// keeps the exact value, escaped as JSON.
func TestMCPTestEscapesServerText(t *testing.T) {
	t.Parallel()
	home := hostileStdio(t, "--name", hostileName, "--server-version", "1.0\x1b[8m", "--tool-desc", "Reads\x1b[2J\u202e files",
		"--extra-tool", "x\x1b]52;c;AAAA\x07")
	r := runHermes(t, home, "mcp", "test", "ts").must(t, 0)
	noControl(t, "mcp test", r.stdout+r.stderr)
	for _, want := range []string{"Server: " + hostileNameShown + ` 1.0\x1b[8m` + "\n", `Reads\x1b[2J\u202e files`, `x\x1b]52;c;AAAA\x07`, "Instructions:\n    Controllable MCP server for Hermes tests and benchmarks.\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("mcp test does not show %q:\n%s", want, r.stdout)
		}
	}
	// mcp add prints the tools it found before saving.
	add := newHome(t)
	r = runHermes(t, add, "mcp", "add", "ts", "--yes", "--command", testbin.Path(t, "hermes-testserver"),
		"--args", "--name", hostileName, "--tool-desc", "Reads\x1b[2J\u202e files", "--extra-tool", "x\x1b]52;c;AAAA\x07").must(t, 0)
	noControl(t, "mcp add", r.stdout+r.stderr)
	if !strings.Contains(r.stdout, `Reads\x1b[2J\u202e files`) || !strings.Contains(r.stdout, `x\x1b]52;c;AAAA\x07`) {
		t.Errorf("mcp add does not show the tools escaped:\n%s", r.stdout)
	}

	r = runHermes(t, home, "mcp", "test", "ts", "--json").must(t, 0)
	noControl(t, "mcp test --json", r.stdout)
	var rep struct {
		ServerName string `json:"server_name"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if rep.ServerName != hostileName {
		t.Errorf("server_name = %q, want %q", rep.ServerName, hostileName)
	}

	// The last line a failing server wrote to stderr ends up in the error.
	home = hostileStdio(t, "--fail-start", "starting\nboom\x1b]52;c;Y3VybCBldmlsfHNo\x07\r✓ all good")
	r = runHermes(t, home, "mcp", "test", "ts").must(t, 1)
	noControl(t, "mcp test of a failing server", r.stdout+r.stderr)
	if !strings.Contains(r.stdout, `boom\x1b]52;c;Y3VybCBldmlsfHNo\x07\r✓ all good`) {
		t.Errorf("the server's error is not shown escaped:\n%s", r.stdout)
	}
	r = runHermes(t, home, "-v", "mcp", "call", "ts", "echo").must(t, 1)
	noControl(t, "mcp call -v of a failing server", r.stdout+r.stderr)
	b, err := os.ReadFile(filepath.Join(home, "logs", "hermes.log"))
	if err != nil {
		t.Fatal(err)
	}
	noControl(t, "hermes.log", string(b))
}

// A tool result keeps its lines but not its control sequences; --json and
// --rendered keep the exact text as JSON escapes.
func TestMCPCallEscapesResult(t *testing.T) {
	t.Parallel()
	home := hostileStdio(t)
	msg := "line one\n\x1b[2J\x1b[Hcleared\r✓ fake\tstatus \u202eevil\u2066"
	r := runHermes(t, home, "mcp", "call", "ts", "echo", "--arg", "message="+msg).must(t, 0)
	noControl(t, "mcp call", r.stdout)
	want := "line one\n" + `\x1b[2J\x1b[Hcleared\r✓ fake` + "\tstatus " + `\u202eevil\u2066` + "\n"
	if r.stdout != want {
		t.Errorf("mcp call printed\n%q\nwant\n%q", r.stdout, want)
	}
	for _, flag := range []string{"--json", "--rendered"} {
		r = runHermes(t, home, "mcp", "call", "ts", "echo", flag, "--arg", "message="+msg).must(t, 0)
		noControl(t, "mcp call "+flag, r.stdout)
		if flag == "--rendered" {
			var s struct {
				Result string `json:"result"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.Result != msg {
				t.Errorf("--rendered: %v, result %q, want %q", err, s.Result, msg)
			}
			continue
		}
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Content) != 1 || res.Content[0].Text != msg {
			t.Errorf("--json: %v, %+v, want the exact text %q", err, res, msg)
		}
	}
}

// forged is a log entry a server tries to slip into hermes.log.
const forged = "2099-01-01T00:00:00.000Z [ERROR] forged entry"

// noForgedLine fails when a line of out starts with the forged entry, or
// when out does not show it escaped inside a real line.
func noForgedLine(t *testing.T, what, out string) {
	t.Helper()
	noControl(t, what, out)
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "2099-01-01") {
			t.Errorf("%s has a forged line: %q", what, line)
		}
	}
	if !strings.Contains(out, `\n`+forged) {
		t.Errorf("%s does not show the forged entry escaped:\n%s", what, out)
	}
}

// A server's log notification and its tool names cannot forge lines in
// hermes.log or in the -v mirror on stderr: each entry stays one line, its
// newlines and escape sequences escaped.
func TestServerCannotForgeLogLines(t *testing.T) {
	t.Parallel()
	home := hostileStdio(t)
	logFile := filepath.Join(home, "logs", "hermes.log")
	// The log notification travels beside the call's answer, so it may
	// come after the command ended: run until the log has it.
	var stderr string
	for range 20 {
		r := runHermes(t, home, "-v", "mcp", "call", "ts", "log", "--arg", "level=error",
			"--arg", "logger=lg\n"+forged, "--arg", "data=disk full\n"+forged+"\x1b[2J").must(t, 0)
		if strings.Contains(r.stderr, "MCP server log [ts/") {
			stderr = r.stderr
			break
		}
	}
	if stderr == "" {
		t.Fatal("the server's log entry never reached the log")
	}
	noForgedLine(t, "stderr (-v)", stderr)
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	noForgedLine(t, "hermes.log", string(b))

	// A tool name reaches the log in the registry's warning about it.
	home = hostileStdio(t, "--extra-tool", "x\n"+forged+"\x1b]0;t\x07", "--dup-tools")
	r := runHermes(t, home, "-v", "mcp", "call", "ts", "echo", "--arg", "message=hi").must(t, 0)
	noForgedLine(t, "stderr (-v)", r.stderr)
	b, err = os.ReadFile(filepath.Join(home, "logs", "hermes.log"))
	if err != nil {
		t.Fatal(err)
	}
	noForgedLine(t, "hermes.log", string(b))
}

// mcp test lists a repeated tool once and says which tools the model will
// not see, as the registry does.
func TestMCPTestReportsSkippedTools(t *testing.T) {
	t.Parallel()
	home := hostileStdio(t, "--dup-tools", "--empty-tool-name", "--extra-tool", "evil\x1b[2J")
	r := runHermes(t, home, "mcp", "test", "ts").must(t, 0)
	noControl(t, "mcp test", r.stdout)
	if n := strings.Count(r.stdout, "  echo "); n != 1 {
		t.Errorf("echo listed %d times:\n%s", n, r.stdout)
	}
	for _, want := range []string{
		"⚠ MCP server 'ts': tool 'echo' is listed 2 times; only the first is used",
		`⚠ MCP server 'ts': tool 'evil\x1b[2J' is listed 2 times`,
		"⚠ MCP server 'ts': 1 tool(s) without a name skipped",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("mcp test lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runHermes(t, home, "mcp", "test", "ts", "--json").must(t, 0)
	var rep struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"discovered_tools"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	seen := map[string]bool{}
	for _, tl := range rep.Tools {
		if seen[tl.Name] || tl.Name == "" {
			t.Errorf("--json lists %q twice or unnamed", tl.Name)
		}
		seen[tl.Name] = true
	}
	if !seen["evil\x1b[2J"] || len(rep.Warnings) < 3 {
		t.Errorf("--json: tools %v, warnings %q", seen, rep.Warnings)
	}
}
