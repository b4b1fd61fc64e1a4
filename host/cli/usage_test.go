package cli_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestUsageMistakes: a mistyped command or flag, or a bad value, is one
// line on stderr saying what was wrong (with the nearest name when one is
// close) and where the usage is, with exit code 2; never the whole help.
func TestUsageMistakes(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"mcp", "ad"}, []string{"unknown command 'hermes mcp ad' (did you mean 'hermes mcp add'?)", "run 'hermes mcp --help'"}},
		{[]string{"mcp", "lst"}, []string{"did you mean 'hermes mcp list'?"}},
		{[]string{"tols"}, []string{"unknown command 'hermes tols' (did you mean 'hermes tools'?)"}},
		{[]string{"frobnicate"}, []string{"unknown command 'hermes frobnicate'; run 'hermes --help'"}},
		{[]string{"mcp", "list", "--jsn"}, []string{"hermes mcp list: unknown flag --jsn (did you mean '--json'?)", "run 'hermes mcp list --help' for usage"}},
		{[]string{"mcp", "enable", "x", "--bogus"}, []string{"hermes mcp enable: unknown flag --bogus"}},
		{[]string{"tools", "--bogus"}, []string{"hermes tools: unknown flag --bogus"}},
		{[]string{"--bogus"}, []string{"hermes: unknown flag --bogus"}},
		{[]string{"mcp", "add", "x", "--command", "c", "--connect-timeout", "soon"}, []string{`hermes mcp add: --connect-timeout wants seconds (30) or a duration (30s, 2m) above 0, got "soon"`}},
		{[]string{"mcp", "add", "x", "--comand", "c"}, []string{"unknown flag --comand (did you mean '--command'?)"}},
		{[]string{"mcp", "install", "x", "--step-timeout", "zz"}, []string{`--step-timeout wants seconds (30) or a duration (30s, 2m) above 0, got "zz"`}},
	} {
		r := runHermes(t, home, c.args...)
		if r.code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", c.args, r.code, r.stderr)
			continue
		}
		if r.stdout != "" {
			t.Errorf("%q printed on stdout: %q", c.args, r.stdout)
		}
		r.oneLineErr(t, c.want...)
	}
}

// TestVersion: --version is one line naming the version, the Go version
// and the plugin contract; `version --json` holds the same as fields.
func TestVersion(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	line := strings.TrimSpace(runHermes(t, home, "--version").must(t, 0).stdout)
	// --version reads nothing and writes nothing: no home folder, no log.
	if _, err := os.Stat(home); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--version made its home folder (%v)", err)
	}
	if !strings.HasPrefix(line, "hermes ") || !strings.Contains(line, runtime.Version()) || !strings.Contains(line, "plugin contracts transport v3, auth v3, bridge v2, model v1") || strings.Contains(line, "\n") {
		t.Fatalf("--version = %q", line)
	}
	var v struct {
		Version, Commit, Go string
		Contracts           map[string]int `json:"plugin_contracts"`
	}
	out := runHermes(t, home, "version", "--json").must(t, 0).stdout
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Version == "" || v.Go != runtime.Version() || v.Contracts["transport"] != 3 || v.Contracts["bridge"] != 2 || v.Contracts["model"] != 1 {
		t.Fatalf("version --json = %q (%v)", out, err)
	}
	if got := strings.TrimSpace(runHermes(t, home, "version").must(t, 0).stdout); got != line {
		t.Errorf("version = %q, --version = %q", got, line)
	}
}

// TestUnknownServerOneWording: every command names an unknown server the
// same way, with the nearest configured name.
func TestUnknownServerOneWording(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  github:\n    url: http://127.0.0.1:1/mcp\n  linear:\n    url: http://127.0.0.1:1/mcp\n")
	for _, args := range [][]string{
		{"mcp", "test", "githb"}, {"mcp", "call", "githb", "x"}, {"mcp", "remove", "githb", "--yes"},
		{"mcp", "enable", "githb"}, {"mcp", "configure", "githb", "--all"}, {"mcp", "login", "githb"},
	} {
		runHermes(t, home, args...).must(t, 1).oneLineErr(t, "no server named 'githb' (did you mean 'github'?); configured: github, linear")
	}
}

// TestRedactionKeepsNames: what hides secrets never hides the names that
// fix the problem: a ${VAR} header shows as written, its message names the
// variable, a literal token is masked, and a value set for the variable
// appears nowhere.
func TestRedactionKeepsNames(t *testing.T) {
	t.Parallel()
	// Not in parallel: sets variables hermes reads from the process.
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  a:\n    url: http://127.0.0.1:1/mcp\n    headers:\n      Authorization: \"Bearer ${AUTHD_TOKEN}\"\n  c:\n    url: http://127.0.0.1:1/mcp\n    headers:\n      X-Api-Key: literal-secret-value-123\n")
	r := runHermes(t, home, "mcp", "test", "a")
	if !strings.Contains(r.stdout, "Auth: Authorization: Bearer ${AUTHD_TOKEN}\n") || !strings.Contains(r.stdout+r.stderr, "add AUTHD_TOKEN=... to") {
		t.Errorf("mcp test a:\n%s%s", r.stdout, r.stderr)
	}
	r = runHermes(t, home, "tools")
	if !strings.Contains(r.stdout+r.stderr, "${AUTHD_TOKEN} is not set") || strings.Contains(r.stdout+r.stderr, "REDACTED") {
		t.Errorf("tools:\n%s%s", r.stdout, r.stderr)
	}
	r = runHermes(t, home, "mcp", "test", "c")
	if !strings.Contains(r.stdout, "X-Api-Key: lit***123") || strings.Contains(r.stdout+r.stderr, "literal-secret-value-123") {
		t.Errorf("mcp test c:\n%s%s", r.stdout, r.stderr)
	}
	r = runHermesEnv(t, home, []string{"AUTHD_TOKEN=supersecrettoken123"}, "mcp", "test", "a")
	if strings.Contains(r.stdout+r.stderr, "supersecrettoken123") || !strings.Contains(r.stdout, "Bearer ${AUTHD_TOKEN} (su***23)") {
		t.Errorf("mcp test a with the token set:\n%s%s", r.stdout, r.stderr)
	}
}

// TestListFitsAndChecks: mcp list shows a command as its program and last
// argument, cuts the Transport column (never names or status) to the
// terminal's width, marks a stdio server whose executable is missing
// without starting anything, and mcp test of a disabled server says so.
func TestListFitsAndChecks(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	long := "/opt/some/very/long/installation/folder/of/the/server/dist/index.js"
	writeConfig(t, home, "mcp_servers:\n  everything:\n    command: sh\n    args: [\""+long+"\", stdio]\n"+
		"  web:\n    url: https://very-long-host-name.example.com/some/very/long/path/to/the/mcp/endpoint\n"+
		"  gone:\n    command: /no/such/server-binary\n  nope:\n    command: no-such-command-on-path\n  off:\n    command: /no/such/either\n    enabled: false\n")
	out := runHermes(t, home, "mcp", "list").must(t, 0).stdout
	for _, w := range []string{"everything sh … stdio ", "gone       server-binary ", "✗ command /no/such/server-binary not found (no executable file there)",
		"✗ command no-such-command-on-path not found on PATH", "off        either", "✗ disabled",
		"https://very-long-host-name.example.com/some/very/long/path/to/the/mcp/endpoint"} {
		if !strings.Contains(out, w) {
			t.Errorf("mcp list lacks %q:\n%s", w, out)
		}
	}
	narrow := runHermesEnv(t, home, []string{"COLUMNS=60"}, "mcp", "list").must(t, 0).stdout
	for _, l := range strings.Split(strings.TrimRight(narrow, "\n"), "\n") {
		if strings.Contains(l, "web") && (!strings.Contains(l, "https://ver") || !strings.Contains(l, "…") || !strings.Contains(l, "✓ enabled")) {
			t.Errorf("narrow row %q", l)
		}
	}
	var entries []map[string]any
	if err := json.Unmarshal([]byte(runHermes(t, home, "mcp", "list", "--json").must(t, 0).stdout), &entries); err != nil {
		t.Fatal(err)
	}
	if entries[2]["state"] != "missing_command" || entries[4]["state"] != "disabled" {
		t.Errorf("json statuses: %v / %v", entries[2], entries[4])
	}
	r := runHermes(t, home, "mcp", "test", "off")
	if !strings.Contains(r.stdout+r.stderr, "'off' is disabled: the model does not see it; enable it with 'hermes mcp enable off'") {
		t.Errorf("mcp test of a disabled server:\n%s%s", r.stdout, r.stderr)
	}
}

// TestAddGarbageFailsFast: adding a server that writes non-JSON to stdout
// fails on what it wrote (not on connect_timeout), and saves nothing.
func TestAddGarbageFailsFast(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	r := runHermes(t, home, "mcp", "add", "g", "--yes", "--connect-timeout", "120", "--command", testServerPath(t), "--args", "--garbage").must(t, 1)
	if !strings.Contains(r.stderr, `wrote non-JSON to stdout: "garbage line 1`) || strings.Contains(r.stderr, "connect_timeout") {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(home, "config.yaml")); err == nil {
		t.Error("a failed add wrote config.yaml")
	}
}

// TestAddChecksURLWithoutProbe: --url must be an http(s) URL even when
// nothing connects (--no-probe); a ${VAR} in it is left to the config.
func TestAddChecksURLWithoutProbe(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	for _, u := range []string{"ftp://example.com/mcp", "example.com/mcp", "http://", "not a url"} {
		runHermes(t, home, "mcp", "add", "x", "--url", u, "--no-probe").must(t, 2).oneLineErr(t, "--url", "http://")
	}
	if _, err := os.Stat(filepath.Join(home, "config.yaml")); err == nil {
		t.Fatal("a refused --url wrote config.yaml")
	}
	runHermes(t, home, "mcp", "add", "y", "--url", "https://${MCP_HOST}/mcp", "--no-probe").must(t, 0)
}

// TestCatalogFitsTheTerminal: at 60 columns every catalog row fits, the
// descriptions cut with "…" and the names and statuses whole.
func TestCatalogFitsTheTerminal(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	out := runHermesEnv(t, home, []string{"COLUMNS=60"}, "mcp", "catalog").must(t, 0).stdout
	rows := 0
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.HasPrefix(l, "⚠") {
			continue
		}
		if w := len([]rune(l)); w > 60 {
			t.Errorf("row of %d columns: %q", w, l)
		}
		if strings.Contains(l, "sequential-thinking") && strings.Contains(l, "available") {
			rows++
		}
	}
	if rows != 1 || !strings.Contains(out, "…") {
		t.Errorf("catalog at 60 columns:\n%s", out)
	}
}

// TestImportJSONErrors: import --json reports a skipped server's reason as
// the shared error object, with its code.
func TestImportJSONErrors(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  memory:\n    command: npx\n")
	file := filepath.Join(t.TempDir(), ".mcp.json")
	if err := os.WriteFile(file, []byte(`{"mcpServers":{"memory":{"command":"npx","args":["-y","@modelcontextprotocol/server-memory"]},"other":{"command":"sh"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := runHermes(t, home, "mcp", "import", "--from", file, "--all", "--no-probe", "--json").must(t, 0).stdout
	var got []struct {
		Name, Status string
		Error        *struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	by := map[string]int{}
	for i, g := range got {
		by[g.Name] = i
	}
	m, o := got[by["memory"]], got[by["other"]]
	if m.Status != "skipped" || m.Error == nil || m.Error.Code != "exists" || !strings.Contains(m.Error.Message, "--force") {
		t.Errorf("memory: %+v", m)
	}
	if o.Status != "saved_unprobed" || o.Error != nil {
		t.Errorf("other: %+v", o)
	}
}

// TestCallJSONFailure: call --json prints the raw result on success and
// the shared error object when the call cannot be made.
func TestCallJSONFailure(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  ts:\n    command: "+testServerPath(t)+"\n  gone:\n    command: /no/such/server\n")
	var ok map[string]any
	if err := json.Unmarshal([]byte(runHermes(t, home, "mcp", "call", "ts", "echo", "--arg", "message=hi", "--json").must(t, 0).stdout), &ok); err != nil || ok["content"] == nil {
		t.Fatalf("success: %v %v", ok, err)
	}
	for args, code := range map[string]string{"nope echo": "unknown_server", "gone echo": "not_found"} {
		r := runHermes(t, home, append([]string{"mcp", "call"}, append(strings.Fields(args), "--json")...)...).must(t, 1)
		var f struct {
			Name  string
			Error *struct{ Code, Message string }
		}
		if err := json.Unmarshal([]byte(r.stdout), &f); err != nil || f.Error == nil || f.Error.Code != code || f.Name != strings.Fields(args)[0] {
			t.Errorf("call %s --json: %q (%v), want code %s", args, r.stdout, err, code)
		}
	}
}

// TestAddJSONJSON: add-json --json prints the saved server object only on
// stdout (its notes and progress on stderr), and a failure the error object.
func TestAddJSONJSON(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	r := runHermes(t, home, "mcp", "add-json", "mem", `{"type":"stdio","command":"sh","env":{"API_TOKEN":"s3cret-value-1"}}`, "--no-probe", "--json").must(t, 0)
	var srv struct {
		Name, State, Command string
		Enabled              bool
	}
	if err := json.Unmarshal([]byte(r.stdout), &srv); err != nil || srv.Name != "mem" || srv.State != "configured" || !srv.Enabled {
		t.Fatalf("stdout %q (%v)", r.stdout, err)
	}
	if strings.Contains(r.stdout+r.stderr, "s3cret-value-1") {
		t.Error("the secret was printed")
	}
	r = runHermes(t, home, "mcp", "add-json", "mem", `{"command":"sh"}`, "--no-probe", "--json").must(t, 1)
	if !strings.Contains(r.stdout, `"error"`) {
		t.Errorf("an add-json over an existing name without --yes printed %q", r.stdout)
	}
}
