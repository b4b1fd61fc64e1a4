package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testnpm"
	"github.com/hermes-agent/hermes/internal/testpty"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// everythingConfig is a config.yaml with server-everything as ev.
func everythingConfig(t *testing.T) string {
	t.Helper()
	node, script := testnpm.Server(t, "@modelcontextprotocol/server-everything")
	return "mcp_servers:\n  ev:\n    command: " + node + "\n    args: [" + script + ", stdio]\n"
}

// TestElicitationOnTerminal: server-everything's elicitation form is
// answered by a person typing at a terminal during 'hermes mcp call': each
// field asked typed by its schema, a wrong answer asked again, empty
// answers taking the defaults, and the server gets the typed values.
func TestElicitationOnTerminal(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, everythingConfig(t))
	tm := startTerm(t, home, nil, "mcp", "call", "ev", "trigger-elicitation-request")
	tm.WaitFor("MCP server 'ev' asks for information:")
	tm.WaitFor("[c]ancel: ")
	tm.Press("y\r")
	for _, step := range []struct{ prompt, typed string }{
		{"String (text, required): ", "Ada Lovelace"},
		{"String with date format (date): ", "1815-12-10"},
		{"Boolean (y/n): ", "y"},
		{"String with email format (email): ", "not an email"},
		{"an email address (name@example.com), please", "ada@example.com"},
		{"String with default (text) [It was a dark and stormy night.]: ", ""},
		{"String with uri format (uri): ", ""},
		{"Integer (integer) [42]: ", "101"},
		{"at most 100, please", "7"},
		{"Legacy Titled Single Select Enum (number) [pet-1]: ", "2"},
		{"Number in range 1-1000 (number) [3.14]: ", ""},
		{"Titled Multiple Select Enum (numbers, comma-separated) [fish-1]: ", "1,3"},
		{"Titled Single Select Enum (number) [hero-1]: ", "Wonder Woman"},
		{"Untitled Multiple Select Enum (numbers, comma-separated) [Guitar]: ", ""},
		{"Untitled Single Select Enum (number) [Monica]: ", "4"},
	} {
		tm.WaitFor(step.prompt)
		tm.Press(step.typed + "\r")
	}
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.Output())
	}
	out := strings.ReplaceAll(tm.Output(), "\r\n", "\n")
	for _, w := range []string{
		"User provided the requested information!", "- Name: Ada Lovelace", "- Email: ada@example.com",
		"- Agreed to terms: true", "- Birthdate: 1815-12-10", "- Favorite Integer: 7", "- Favorite Number: 3.14",
		`"legacyTitledEnum": "pet-2"`, `"titledSingleSelectEnum": "hero-3"`, `"untitledSingleSelectEnum": "Chandler"`,
		`"firstLine": "It was a dark and stormy night."`,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("the server did not get %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, `"homepage"`) {
		t.Errorf("an optional field left empty was sent:\n%s", out)
	}
}

// TestElicitationWithoutTerminalDeclines: 'hermes mcp call' with stdin not
// a terminal declines, and the capabilities are offered all the same
// (server-everything lists its elicitation and roots tools only to a
// client that offers them).
func TestElicitationWithoutTerminalDeclines(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, everythingConfig(t))
	r := runHermesBinary(t, home, nil, nil, "mcp", "call", "ev", "trigger-elicitation-request").must(t, 0)
	if !strings.Contains(r.stdout, "User declined to provide the requested information.") || strings.Contains(r.stderr, "asks for information") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	r = runHermesBinary(t, home, nil, nil, "mcp", "test", "ev", "--json").must(t, 0)
	var rep struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"discovered_tools"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	var names []string
	for _, tl := range rep.Tools {
		names = append(names, tl.Name)
	}
	for _, w := range []string{"trigger-elicitation-request", "trigger-url-elicitation", "get-roots-list"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+w+" ") {
			t.Errorf("hermes mcp test did not offer what %s needs: tools %v", w, names)
		}
	}
}

// TestRootsReadByFilesystemServer: server-filesystem takes the client's
// roots as its allowed folders: the working folder and roots: of
// config.yaml (a ~ path and a named entry), not the folder on its command
// line.
func TestRootsReadByFilesystemServer(t *testing.T) {
	t.Parallel()
	node, script := testnpm.Server(t, "@modelcontextprotocol/server-filesystem")
	home := newHome(t)
	user := t.TempDir()
	argDir, wd, named, extra := t.TempDir(), t.TempDir(), t.TempDir(), filepath.Join(user, "projects")
	if err := os.MkdirAll(extra, 0o755); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, home, "roots:\n  - ~/projects\n  - {path: "+named+"/../"+filepath.Base(named)+"/, name: Named}\n"+
		"mcp_servers:\n  fs:\n    command: "+node+"\n    args: ["+script+", "+argDir+"]\n")
	real := func(d string) string {
		p, err := filepath.EvalSymlinks(d)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// server-filesystem asks for the roots once initialized and answers
	// calls meanwhile with its command line's folders: a call may come
	// first, so the test calls again until the roots are in (each call a
	// new process; without roots they never are).
	var r runResult
	testwait.For(t, 5*testpty.Timeout, "server-filesystem to take the roots", func() bool {
		cmd := exec.Command(testbin.Path(t, "hermes"), "mcp", "call", "fs", "list_allowed_directories")
		cmd.Env = hermesTestEnv(t, home, "HOME="+user)
		cmd.Dir = wd
		r = runCmd(t, cmd).must(t, 0)
		return strings.Contains(r.stdout, real(wd))
	})
	for _, d := range []string{wd, extra, named} {
		if !strings.Contains(r.stdout, real(d)) {
			t.Errorf("allowed folders lack %s:\n%s", real(d), r.stdout)
		}
	}
	if strings.Contains(r.stdout, real(argDir)) {
		t.Errorf("the command line's folder is still allowed: the roots were not used:\n%s", r.stdout)
	}

	// roots: false in the entry: the server is offered no roots and keeps
	// the folder of its command line.
	writeConfig(t, home, "mcp_servers:\n  fs:\n    command: "+node+"\n    args: ["+script+", "+argDir+"]\n    roots: false\n")
	cmd := exec.Command(testbin.Path(t, "hermes"), "mcp", "call", "fs", "list_allowed_directories")
	cmd.Env = hermesTestEnv(t, home, "HOME="+user)
	cmd.Dir = wd
	r = runCmd(t, cmd).must(t, 0)
	if !strings.Contains(r.stdout, real(argDir)) || strings.Contains(r.stdout, real(wd)) {
		t.Errorf("with roots: false the server's own folder should be the one allowed:\n%s", r.stdout)
	}
}

// TestURLElicitationOnTerminal: server-everything's URL elicitation shows
// the URL and the server's message escaped, opens the page only after
// the person's yes ($BROWSER), and a no declines without opening it.
func TestURLElicitationOnTerminal(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, everythingConfig(t))
	browser, log := fakeBrowser(t, true)
	const page = "https://example.com/connect?state=s1"
	for _, answer := range []string{"n", "y"} {
		tm := startTerm(t, home, []string{browser}, "mcp", "call", "ev", "trigger-url-elicitation",
			"--arg", "url="+page, "--arg", "message=Link your account \x1b[2J\x1b]0;owned\x07")
		tm.WaitFor("MCP server 'ev' asks you to open a web page:")
		tm.WaitFor("Open it in your browser? [y]es, [n]o (decline), [c]ancel: ")
		tm.Press(answer + "\r")
		if code := tm.Wait(); code != 0 {
			t.Fatalf("answer %s: exit %d:\n%s", answer, code, tm.Output())
		}
		out := tm.Output()
		if !strings.Contains(out, "URL:  "+page) || !strings.Contains(out, `Link your account \x1b[2J\x1b]0;owned\x07`) || strings.Contains(out, "\x1b[2J") {
			t.Errorf("answer %s: the request was not shown escaped:\n%q", answer, out)
		}
		want := map[string]string{"n": "User declined to open the URL", "y": "User completed the URL elicitation flow"}[answer]
		if !strings.Contains(out, want) {
			t.Errorf("answer %s: the server did not get it:\n%s", answer, out)
		}
		if answer == "n" {
			if b, _ := os.ReadFile(log); len(b) != 0 {
				t.Fatalf("a declined page was opened: %s", b)
			}
			continue
		}
		testwait.For(t, testpty.Timeout, "the browser to be given the page", func() bool {
			b, _ := os.ReadFile(log)
			return strings.Contains(string(b), page)
		})
	}
}

// TestAddKeepsArgvFolders: a server added (add, add-json) with folders on
// its command line is saved with roots: false and says why, so
// server-filesystem serves the folder the person named, not the folder
// hermes was started from (it replaced its argv's folders with the roots).
// An entry that sets roots itself keeps what it says.
func TestAddKeepsArgvFolders(t *testing.T) {
	t.Parallel()
	node, script := testnpm.Server(t, "@modelcontextprotocol/server-filesystem")
	home := newHome(t)
	argDir, wd := t.TempDir(), t.TempDir()
	real := func(d string) string {
		p, err := filepath.EvalSymlinks(d)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(args ...string) runResult {
		cmd := exec.Command(testbin.Path(t, "hermes"), args...)
		cmd.Env = hermesTestEnv(t, home)
		cmd.Dir = wd
		return runCmd(t, cmd)
	}
	r := run("mcp", "add", "fs", "--yes", "--", node, script, argDir).must(t, 0)
	if !strings.Contains(r.stdout, "names folders on its command line ("+argDir+"): it is saved with roots: false") {
		t.Errorf("add does not say why roots are off:\n%s", r.stdout)
	}
	r = run("mcp", "add-json", "fs2", `{"type":"stdio","command":"`+node+`","args":["`+script+`","`+argDir+`"]}`, "--yes").must(t, 0)
	if !strings.Contains(r.stdout, "roots: false") {
		t.Errorf("add-json does not say why roots are off:\n%s", r.stdout)
	}
	run("mcp", "add", "fs3", "--yes", "--no-probe", "--", node, script).must(t, 0)
	cfg := loadConfig(t, home)
	if !cfg.Server("fs").NoRoots || !cfg.Server("fs2").NoRoots || cfg.Server("fs3").NoRoots {
		t.Fatalf("roots off: fs %v, fs2 %v, fs3 (no folder) %v; config.yaml:\n%s", cfg.Server("fs").NoRoots, cfg.Server("fs2").NoRoots, cfg.Server("fs3").NoRoots, readConfig(t, home))
	}
	for _, name := range []string{"fs", "fs2"} {
		r = run("mcp", "call", name, "list_allowed_directories").must(t, 0)
		if !strings.Contains(r.stdout, real(argDir)) || strings.Contains(r.stdout, real(wd)) {
			t.Errorf("%s serves other folders than the one named:\n%s", name, r.stdout)
		}
	}
}
