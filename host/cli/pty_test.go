//go:build unix

package cli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/internal/testbin"
)

// ptyTerm is the hermes binary running on a pseudo-terminal, driven like a
// person would.
type ptyTerm struct {
	t    *testing.T
	cmd  *exec.Cmd
	pty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	read chan struct{} // closed when the output ends
	done chan struct{} // closed when the process ended
	err  error
}

const (
	ptyKeyDown  = "\x1b[B"
	ptyKeyEnter = "\r"
)

// startTerm runs hermes with args on a 120x40 pseudo-terminal.
func startTerm(t *testing.T, home string, extra []string, args ...string) *ptyTerm {
	t.Helper()
	cmd := exec.Command(testbin.Path(t, "hermes"), args...)
	cmd.Env = hermesTestEnv(t, home, extra...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	tm := &ptyTerm{t: t, cmd: cmd, pty: f, read: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(tm.read)
		buf := make([]byte, 4096)
		answered := 0
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			all := tm.out.String()
			tm.mu.Unlock()
			// Answer the terminal queries a real terminal answers (the
			// TUI library asks for the background colour at start and
			// waits for a reply).
			for _, q := range termQueries.FindAllString(all, -1)[answered:] {
				answered++
				reply := "\x1b[1;1R"
				if strings.HasPrefix(q, "\x1b]11") {
					reply = "\x1b]11;rgb:0000/0000/0000\x1b\\"
				}
				_, _ = f.WriteString(reply)
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		tm.err = cmd.Wait()
		close(tm.done)
	}()
	t.Cleanup(func() {
		select {
		case <-tm.done:
		default:
			_ = cmd.Process.Kill()
			<-tm.done
		}
		_ = f.Close()
		<-tm.read
	})
	return tm
}

// output is everything the terminal showed so far.
func (tm *ptyTerm) output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

// waitFor waits until the output contains s.
func (tm *ptyTerm) waitFor(s string) {
	tm.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(tm.output(), s) {
		if time.Now().After(deadline) {
			tm.t.Fatalf("timed out waiting for %q; output so far:\n%s", s, tm.output())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// press types keys one at a time.
func (tm *ptyTerm) press(keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		if _, err := tm.pty.WriteString(k); err != nil {
			tm.t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wait waits for the process and returns its exit code.
func (tm *ptyTerm) wait() int {
	tm.t.Helper()
	select {
	case <-tm.done:
	case <-time.After(60 * time.Second):
		tm.t.Fatalf("hermes did not exit; output:\n%s", tm.output())
	}
	// Let the reader drain what is left.
	select {
	case <-tm.read:
	case <-time.After(2 * time.Second):
	}
	var ee *exec.ExitError
	if errors.As(tm.err, &ee) {
		return ee.ExitCode()
	}
	if tm.err != nil {
		tm.t.Fatal(tm.err)
	}
	return 0
}

// termQueries are the background colour and cursor position queries.
var termQueries = regexp.MustCompile(`\x1b\]11;\?(?:\x1b\\|\x07)|\x1b\[6n`)

var toolRow = regexp.MustCompile(`(?m)^    (\S+) +\S`)

func TestAddInteractiveChecklist(t *testing.T) {
	home := newHome(t)
	tm := startTerm(t, home, nil, "mcp", "add", "ts", "--command", testServerPath(t))
	tm.waitFor("Tools to enable for 'ts'")
	tm.waitFor("21/21 selected")
	tm.press(ptyKeyDown, " ")
	tm.waitFor("20/21 selected")
	tm.press(ptyKeyEnter)
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.output())
	}
	out := tm.output()
	head, _, _ := strings.Cut(out, "Tools to enable")
	var tools []string
	for _, m := range toolRow.FindAllStringSubmatch(head, -1) {
		tools = append(tools, m[1])
	}
	if len(tools) != 21 {
		t.Fatalf("listed tools %q", tools)
	}
	if !strings.Contains(out, "✓ Saved 'ts' to "+filepath.Join(home, "config.yaml")+" (20/21 tools enabled)") ||
		!strings.Contains(out, "Start a new session to use these tools.") {
		t.Errorf("output:\n%s", out)
	}
	want := slices.Delete(slices.Clone(tools), 1, 2)
	if got := loadConfig(t, home).Server("ts").Tools.Include; !slices.Equal(got, want) {
		t.Errorf("include = %q\nwant %q", got, want)
	}
}

func TestAddInteractiveProbeFailureSavesDisabled(t *testing.T) {
	home := newHome(t)
	tm := startTerm(t, home, nil, "mcp", "add", "bad", "--command", testServerPath(t), "--args", "--fail-start", "kaboom")
	tm.waitFor("Save config anyway (you can test later)? [y/N] ")
	tm.press("y\r")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.output())
	}
	out := tm.output()
	if !strings.Contains(out, "✗ Failed to connect: ") || !strings.Contains(out, "kaboom") ||
		!strings.Contains(out, "Fix the issue, then: hermes mcp test bad") {
		t.Errorf("output:\n%s", out)
	}
	if s := loadConfig(t, home).Server("bad"); s == nil || s.Enabled {
		t.Errorf("server %+v, want saved and disabled", s)
	}

	// Adding it again asks before overwriting; the default is No.
	before := readConfig(t, home)
	tm = startTerm(t, home, nil, "mcp", "add", "bad", "--command", "other", "--no-probe")
	tm.waitFor("Server 'bad' already exists. Overwrite? [y/N] ")
	tm.press("\r")
	if code := tm.wait(); code != 1 || !strings.Contains(tm.output(), "Cancelled; 'bad' was not changed") {
		t.Fatalf("exit %d:\n%s", code, tm.output())
	}
	if readConfig(t, home) != before {
		t.Error("declining the overwrite changed the config")
	}
}

func TestAddInteractiveHTTPToken(t *testing.T) {
	const token = "sk-live-9f8e7d6c5b4a"
	home := newHome(t)
	url := startHTTPServer(t, "--require-bearer", token)
	tm := startTerm(t, home, nil, "mcp", "add", "my-web", "--url", url)
	tm.waitFor("Does this server require authentication? [Y/n] ")
	tm.press("\r")
	tm.waitFor("API key / Bearer token: ")
	tm.press("Bearer " + token + "\r")
	tm.waitFor("Tools to enable for 'my-web'")
	tm.press(ptyKeyEnter)
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.output())
	}
	out := tm.output()
	if strings.Contains(out, token) || strings.Contains(out, token[:12]) {
		t.Fatalf("the token appeared on the terminal:\n%s", out)
	}
	if !strings.Contains(out, "✓ API key saved to "+home+"/.env as MCP_MY_WEB_API_KEY") ||
		!strings.Contains(out, "(21/21 tools enabled)") {
		t.Errorf("output:\n%s", out)
	}
	envFile := filepath.Join(home, ".env")
	st, err := os.Stat(envFile)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf(".env mode %v, want 0600", st.Mode().Perm())
	}
	vals, err := config.LoadDotEnv(home)
	if err != nil {
		t.Fatal(err)
	}
	if vals["MCP_MY_WEB_API_KEY"] != token {
		t.Error("the token in .env is not the one typed (without its Bearer prefix)")
	}
	want := "mcp_servers:\n  my-web:\n    url: " + url + "\n    headers:\n      Authorization: Bearer ${MCP_MY_WEB_API_KEY}\n"
	if got := readConfig(t, home); got != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}

	// A second server with the key already in .env is not asked again.
	if err := config.SetDotEnv(home, "MCP_OTHER_API_KEY", token); err != nil {
		t.Fatal(err)
	}
	tm = startTerm(t, home, nil, "mcp", "add", "other", "--url", url, "--no-probe")
	tm.waitFor("Does this server require authentication? [Y/n] ")
	tm.press("y\r")
	tm.waitFor("✓ MCP_OTHER_API_KEY: already configured")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.output())
	}
	if h := loadConfig(t, home).Server("other").Headers["Authorization"]; h != "Bearer "+token {
		t.Error("the existing key was not wired into the header")
	}
}

func TestConfigureInteractive(t *testing.T) {
	home := newHome(t)
	runHermes(t, home, "mcp", "add", "ts", "--command", testServerPath(t), "--tools", "echo,add").must(t, 0)
	before := readConfig(t, home)

	// ENTER right away keeps the selection.
	tm := startTerm(t, home, nil, "mcp", "configure", "ts")
	tm.waitFor("Currently 2/21 tools enabled for 'ts'.")
	tm.waitFor("2/21 selected")
	tm.press(ptyKeyEnter)
	if code := tm.wait(); code != 0 || !strings.Contains(tm.output(), "No changes made.") {
		t.Fatalf("exit %d:\n%s", code, tm.output())
	}
	if readConfig(t, home) != before {
		t.Fatal("config changed without a change")
	}

	// "a" checks every tool: the filter goes away.
	tm = startTerm(t, home, nil, "mcp", "configure", "ts")
	tm.waitFor("2/21 selected")
	tm.press("a")
	tm.waitFor("21/21 selected")
	tm.press(ptyKeyEnter)
	if code := tm.wait(); code != 0 || !strings.Contains(tm.output(), "✓ Updated config: 21/21 tools enabled") {
		t.Fatalf("exit %d:\n%s", code, tm.output())
	}
	if got, want := readConfig(t, home), "mcp_servers:\n  ts:\n    command: "+testServerPath(t)+"\n"; got != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}

	// Unchecking the first tool saves an include list without it.
	tm = startTerm(t, home, nil, "mcp", "configure", "ts")
	tm.waitFor("21/21 selected")
	tm.press(" ")
	tm.waitFor("20/21 selected")
	tm.press(ptyKeyEnter)
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.output())
	}
	inc := loadConfig(t, home).Server("ts").Tools.Include
	if len(inc) != 20 || slices.Contains(inc, "add") {
		t.Errorf("include = %q", inc)
	}
}
