//go:build unix

package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testpty"
)

// startTerm runs hermes with args on a 120x40 pseudo-terminal, driven like a
// person would.
func startTerm(t *testing.T, home string, extra []string, args ...string) *testpty.Term {
	t.Helper()
	cmd := exec.Command(testbin.Path(t, "hermes"), args...)
	cmd.Env = hermesTestEnv(t, home, extra...)
	return testpty.Start(t, cmd, 40, 120)
}

var toolRow = regexp.MustCompile(`(?m)^    (\S+) +\S`)

func TestAddInteractiveChecklist(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	tm := startTerm(t, home, nil, "mcp", "add", "ts", "--command", testServerPath(t))
	tm.WaitFor("Tools to enable for 'ts'")
	tm.WaitFor("21/21 selected")
	tm.Press(testpty.KeyDown, " ")
	tm.WaitFor("20/21 selected")
	tm.Press(testpty.KeyEnter)
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.Output())
	}
	out := tm.Output()
	// The tools are shown once, in the checklist, not listed before it.
	head, _, _ := strings.Cut(out, "Tools to enable")
	if !strings.Contains(head, "Connected! Found 21 tool(s) from 'ts'.") || len(toolRow.FindAllStringSubmatch(head, -1)) != 0 {
		t.Fatalf("before the checklist:\n%s", head)
	}
	tools := checklistKeys(out)
	if len(tools) != 21 {
		t.Fatalf("checklist tools %q", tools)
	}
	if !strings.Contains(out, "✓ Saved 'ts' to "+filepath.Join(home, "config.yaml")+" (20/21 tools enabled)") ||
		!strings.Contains(out, "(/reload-mcp in a running chat)") {
		t.Errorf("output:\n%s", out)
	}
	want := slices.Delete(slices.Clone(tools), 1, 2)
	if got := loadConfig(t, home).Server("ts").Tools.Include; !slices.Equal(got, want) {
		t.Errorf("include = %q\nwant %q", got, want)
	}
}

func TestAddInteractiveProbeFailureSavesDisabled(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	tm := startTerm(t, home, nil, "mcp", "add", "bad", "--command", testServerPath(t), "--args", "--fail-start", "kaboom")
	tm.WaitFor("Save config anyway (you can test later)? [y/N] ")
	tm.Press("y\r")
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.Output())
	}
	out := tm.Output()
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
	tm.WaitFor("Server 'bad' already exists. Overwrite? [y/N] ")
	tm.Press("\r")
	if code := tm.Wait(); code != 1 || !strings.Contains(tm.Output(), "Cancelled; 'bad' was not changed") {
		t.Fatalf("exit %d:\n%s", code, tm.Output())
	}
	if readConfig(t, home) != before {
		t.Error("declining the overwrite changed the config")
	}
}

func TestAddInteractiveHTTPToken(t *testing.T) {
	t.Parallel()
	const token = "sk-live-9f8e7d6c5b4a"
	home := newHome(t)
	url := startHTTPServer(t, "--require-bearer", token, "--plain-challenge")
	// No question up front: the server's 401 is what asks for the token.
	tm := startTerm(t, home, nil, "mcp", "add", "my-web", "--url", url)
	tm.WaitFor("The server wants credentials")
	tm.WaitFor("API key / Bearer token: ")
	tm.Press("Bearer " + token + "\r")
	tm.WaitFor("Tools to enable for 'my-web'")
	tm.Press(testpty.KeyEnter)
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.Output())
	}
	out := tm.Output()
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
	tm = startTerm(t, home, nil, "mcp", "add", "other", "--url", url, "--auth", "header", "--no-probe")
	tm.WaitFor("✓ MCP_OTHER_API_KEY: already configured")
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.Output())
	}
	if h := loadConfig(t, home).Server("other").Headers["Authorization"]; h != "Bearer "+token {
		t.Error("the existing key was not wired into the header")
	}
}

func TestConfigureInteractive(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	runHermes(t, home, "mcp", "add", "ts", "--command", testServerPath(t), "--tools", "echo,add").must(t, 0)
	before := readConfig(t, home)

	// ENTER right away keeps the selection.
	tm := startTerm(t, home, nil, "mcp", "configure", "ts")
	tm.WaitFor("Currently 2/21 tools enabled for 'ts'.")
	tm.WaitFor("2/21 selected")
	tm.Press(testpty.KeyEnter)
	if code := tm.Wait(); code != 0 || !strings.Contains(tm.Output(), "No changes made.") {
		t.Fatalf("exit %d:\n%s", code, tm.Output())
	}
	if readConfig(t, home) != before {
		t.Fatal("config changed without a change")
	}

	// "a" checks every tool: the filter goes away.
	tm = startTerm(t, home, nil, "mcp", "configure", "ts")
	tm.WaitFor("2/21 selected")
	tm.Press("a")
	tm.WaitFor("21/21 selected")
	tm.Press(testpty.KeyEnter)
	if code := tm.Wait(); code != 0 || !strings.Contains(tm.Output(), "✓ Updated config: 21/21 tools enabled") {
		t.Fatalf("exit %d:\n%s", code, tm.Output())
	}
	if got, want := readConfig(t, home), "mcp_servers:\n  ts:\n    command: "+testServerPath(t)+"\n"; got != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}

	// Unchecking the first tool saves an include list without it.
	tm = startTerm(t, home, nil, "mcp", "configure", "ts")
	tm.WaitFor("21/21 selected")
	tm.Press(" ")
	tm.WaitFor("20/21 selected")
	tm.Press(testpty.KeyEnter)
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.Output())
	}
	inc := loadConfig(t, home).Server("ts").Tools.Include
	if len(inc) != 20 || slices.Contains(inc, "add") {
		t.Errorf("include = %q", inc)
	}
}

// On a terminal, a server added without --auth whose probe meets an OAuth
// challenge gets the hint, and the offer to switch to OAuth and log in:
// declined, the usual save-anyway question follows; accepted, the OAuth
// login runs with the entry not yet saved.
func TestAddInteractiveOAuthOffer(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	url := startHTTPServer(t, "--require-bearer", "tok-not-typed")
	tm := startTerm(t, home, nil, "mcp", "add", "w", "--url", url)
	tm.WaitFor("This server uses OAuth; run: hermes mcp login w")
	tm.WaitFor("Switch 'w' to OAuth and log in now? [Y/n] ")
	tm.Press("n\r")
	tm.WaitFor("Use an API key or bearer token instead? [y/N] ")
	tm.Press("\r")
	tm.WaitFor("Save config anyway (you can test later)? [y/N] ")
	tm.Press("y\r")
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.Output())
	}
	if s := loadConfig(t, home).Server("w"); s == nil || s.Enabled || s.Auth != "" {
		t.Fatalf("server %+v, want saved, disabled, without auth", s)
	}

	testbin.Path(t, "hermes-auth-oauth")
	tm = startTerm(t, home, nil, "mcp", "add", "w2", "--url", url, "--no-browser")
	tm.WaitFor("Switch 'w2' to OAuth and log in now? [Y/n] ")
	tm.Press("\r")
	tm.WaitFor("Logging in to 'w2'...")
	// The test server names no working authorization server: the login
	// fails, and nothing is saved.
	if code := tm.Wait(); code != 1 || !strings.Contains(tm.Output(), "nothing was saved") {
		t.Fatalf("exit %d; output:\n%s", code, tm.Output())
	}
	if loadConfig(t, home).Server("w2") != nil {
		t.Error("w2 was saved")
	}
}

// A code pasted at the login prompt of a real terminal completes the
// login.
func TestLoginPasteOnTerminal(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	url := startHTTPServer(t, "--require-bearer", "fake-token")
	writeConfig(t, home, "mcp_servers:\n  fk:\n    url: "+url+"\n    auth: fake\n")
	testbin.Path(t, "hermes-auth-fake")
	tm := startTerm(t, home, nil, "mcp", "login", "fk", "--no-browser")
	tm.WaitFor("Paste the code (or 'skip'): ")
	tm.Press("fake-code-123\r")
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.Output())
	}
	if out := tm.Output(); !strings.Contains(out, "✓ Logged in to 'fk' as tester@example.com") || !strings.Contains(out, "✓ Connected: 21 tools") {
		t.Errorf("output:\n%s", out)
	}
}

// TestAddInteractiveNoAuthQuestion: an HTTP server that answers without
// asking for credentials is added with no question about them.
func TestAddInteractiveNoAuthQuestion(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	url := startHTTPServer(t)
	tm := startTerm(t, home, nil, "mcp", "add", "open-web", "--url", url)
	tm.WaitFor("Tools to enable for 'open-web'")
	tm.Press(testpty.KeyEnter)
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.Output())
	}
	if out := tm.Output(); strings.Contains(out, "authentication") || strings.Contains(out, "API key") {
		t.Errorf("asked about credentials the server never wanted:\n%s", out)
	}
}

// TestAddInteractiveTokenInsteadOfOAuth: a server whose 401 names OAuth
// takes a pasted token instead when the user declines the OAuth login.
func TestAddInteractiveTokenInsteadOfOAuth(t *testing.T) {
	t.Parallel()
	const token = "tok-static-0123456789"
	home := newHome(t)
	url := startHTTPServer(t, "--require-bearer", token)
	tm := startTerm(t, home, nil, "mcp", "add", "gh", "--url", url)
	tm.WaitFor("Switch 'gh' to OAuth and log in now? [Y/n] ")
	tm.Press("n\r")
	tm.WaitFor("Use an API key or bearer token instead? [y/N] ")
	tm.Press("y\r")
	tm.WaitFor("API key / Bearer token: ")
	tm.Press(token + "\r")
	tm.WaitFor("Tools to enable for 'gh'")
	tm.Press(testpty.KeyEnter)
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.Output())
	}
	if s := loadConfig(t, home).Server("gh"); s == nil || !s.Enabled || s.Headers["Authorization"] != "Bearer "+token {
		t.Fatalf("server %+v", s)
	}
	if strings.Contains(tm.Output(), token) {
		t.Error("the token appeared on the terminal")
	}
}

// checklistRow is a row of the tool checklist: a check box and the key.
var checklistRow = regexp.MustCompile(`\[[ x✓]\] (\S+)`)

// checklistKeys lists the keys of the checklist's first drawing, in order.
func checklistKeys(out string) []string {
	_, rest, _ := strings.Cut(out, "Tools to enable")
	var keys []string
	for _, m := range checklistRow.FindAllStringSubmatch(rest, -1) {
		if slices.Contains(keys, m[1]) {
			break
		}
		keys = append(keys, m[1])
	}
	return keys
}

// 'hermes mcp configure' on a terminal shows the tools that changed since
// they were approved and accepts them when the person says yes.
func TestConfigureInteractiveAcceptsDrift(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	srv := testServerPath(t)
	runHermes(t, home, "mcp", "add", "ts", "--command", srv).must(t, 0)
	writeConfig(t, home, "mcp_servers:\n  ts:\n    command: "+srv+"\n    args: [--tool-desc, Now it deletes things.]\n    tools:\n      on_change: deny\n")

	tm := startTerm(t, home, nil, "mcp", "configure", "ts")
	tm.WaitFor("1 tool(s) of 'ts' changed since they were approved:")
	tm.WaitFor("now: Now it deletes things.")
	tm.WaitFor("Accept these changes?")
	tm.Press("y\r")
	tm.WaitFor("Accepted the current definitions of the tools of 'ts'.")
	tm.WaitFor("21/21 selected")
	tm.Press(testpty.KeyEnter)
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.Output())
	}
	out := runHermes(t, home, "tools", "--json").must(t, 0).stdout
	if !strings.Contains(out, `"mcp_ts_echo"`) || strings.Contains(out, `"drift"`) {
		t.Fatalf("after accepting on the terminal:\n%s", out)
	}
}
