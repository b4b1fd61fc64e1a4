package cli_test

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
)

// importWorld is a user's machine for the import tests: a home folder
// holding the other clients' files, a project folder hermes runs in, and
// the Hermes home.
type importWorld struct {
	user, project, home string
}

func newImportWorld(t *testing.T) importWorld {
	t.Helper()
	root := t.TempDir()
	w := importWorld{user: filepath.Join(root, "user"), project: filepath.Join(root, "project"), home: filepath.Join(root, "hermes")}
	for _, d := range []string{w.user, w.project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// put writes text to path (relative to base), creating folders.
func put(t *testing.T, base, path, text string) {
	t.Helper()
	p := filepath.Join(base, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// fixture returns an importer fixture with PROJECT_DIR replaced.
func fixture(t *testing.T, name, project string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testbin.Root(), "host", "importer", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), "PROJECT_DIR", project)
}

// run runs hermes in process in the project folder with HOME set to the
// user's folder; stdin is in (nil: nothing).
func (w importWorld) run(t *testing.T, in io.Reader, args ...string) runResult {
	t.Helper()
	env := hermesTestEnv(t, w.home, "HOME="+w.user, "CODEX_HOME=", "XDG_CONFIG_HOME=")
	return runInProcess(t, w.project, env, in, args...)
}

func (w importWorld) dotEnv(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.home, ".env"))
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noLeak fails when any of secrets shows in anything the runs printed.
func noLeak(t *testing.T, secrets []string, runs ...runResult) {
	t.Helper()
	for _, r := range runs {
		for _, s := range secrets {
			if strings.Contains(r.stdout+r.stderr, s) {
				t.Errorf("secret %q printed:\nstdout:\n%s\nstderr:\n%s", s, r.stdout, r.stderr)
			}
		}
	}
}

// The secrets in the fixtures.
var fixtureSecrets = []string{
	"ghp_EXAMPLEexampleEXAMPLEexample00000000", "bs-live-4f8a2c1e9d7b6a5f", "hunter2pass", "s3cr3t-search-key-value",
	"gmn-token-0123456789abcdef", "your-client-secret-value", "lapras-0f3c9a7d2e",
}

// With every client's files in place (Claude Code's user and project
// files, Codex's, Gemini CLI's, Cursor's, VS Code's), --dry-run lists every
// server with where it comes from and which .env variables its secrets
// would go to, prints no secret, writes nothing, and --json says the same
// per server.
func TestImportDryRunEveryClient(t *testing.T) {
	t.Parallel()
	w := newImportWorld(t)
	put(t, w.user, ".claude.json", fixture(t, "claude/claude.json", w.project))
	put(t, w.project, ".mcp.json", fixture(t, "claude/mcp.json", w.project))
	put(t, w.user, ".codex/config.toml", fixture(t, "codex/config.toml", w.project))
	put(t, w.user, ".gemini/settings.json", fixture(t, "gemini/settings.json", w.project))
	put(t, w.user, ".cursor/mcp.json", fixture(t, "cursor/mcp.json", w.project))
	put(t, w.project, ".vscode/mcp.json", fixture(t, "vscode/mcp.json", w.project))

	r := w.run(t, nil, "mcp", "import", "--dry-run").must(t, 0)
	for _, want := range []string{
		"+ postgres from " + filepath.Join(w.user, ".claude.json") + " (this project)",
		"+ github from " + filepath.Join(w.project, ".mcp.json"),
		"env GITHUB_PERSONAL_ACCESS_TOKEN -> .env as MCP_GITHUB_GITHUB_PERSONAL_ACCESS_TOKEN",
		"header X-API-Key -> .env as MCP_BOLDSIGN_X_API_KEY",
		"+ context7 from " + filepath.Join(w.user, ".codex", "config.toml"),
		"Authorization: Bearer ${FIGMA_OAUTH_TOKEN}",
		"+ httpServer from " + filepath.Join(w.user, ".gemini", "settings.json"),
		"+ lapras from " + filepath.Join(w.user, ".cursor", "mcp.json"),
		"+ Perplexity from " + filepath.Join(w.project, ".vscode", "mcp.json"),
		"+ my-remote-server (named 'my.remote server' there)",
		"note: headersHelper",
		"Dry run: nothing was written.",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	// github is in Claude Code's files and VS Code's: the first client
	// wins, the other is skipped with a note.
	if !strings.Contains(r.stdout, "Skipping 'github' from "+filepath.Join(w.project, ".vscode", "mcp.json")) {
		t.Errorf("the clash of github is not reported:\n%s", r.stdout)
	}
	j := w.run(t, nil, "mcp", "import", "--dry-run", "--json").must(t, 0)
	var res []map[string]any
	if err := json.Unmarshal([]byte(j.stdout), &res); err != nil {
		t.Fatalf("--json: %v\n%s", err, j.stdout)
	}
	status := map[string]string{}
	for _, x := range res {
		if x["status"] != "skipped" {
			status[x["name"].(string)] = x["status"].(string)
		}
	}
	for _, n := range []string{"postgres", "notion", "github", "memory", "context7", "figma", "linear", "search", "pythonTools", "oauthServer", "playwright", "lapras", "Perplexity", "fetch", "my-remote-server"} {
		if status[n] != "would_import" {
			t.Errorf("%s: status %q", n, status[n])
		}
	}
	noLeak(t, fixtureSecrets, r, j)
	if c := readConfig(t, w.home); c != "" {
		t.Errorf("--dry-run wrote config.yaml:\n%s", c)
	}
	if d := w.dotEnv(t); d != "" {
		t.Errorf("--dry-run wrote .env")
	}
}

// An HTTP server whose Authorization header is a literal token in Claude
// Code's .mcp.json: import --yes puts the token in .env, config.yaml
// refers to it, the probe through the real transport authenticates with
// it, and nothing printed shows it; get shows the reference.
func TestImportMovesSecretsToDotEnvAndProbes(t *testing.T) {
	t.Parallel()
	const token = "tok-ImportS3cret-4242"
	url := startHTTPServer(t, "--require-bearer", token)
	w := newImportWorld(t)
	put(t, w.project, ".mcp.json", `{"mcpServers": {
  "remote": {"type": "http", "url": "`+url+`", "headers": {"Authorization": "Bearer `+token+`"}},
  "local": {"type": "stdio", "command": "`+testServerPath(t)+`", "env": {"SERVICE_API_KEY": "key-ImportS3cret-77"}}
}}`)
	r := w.run(t, nil, "mcp", "import", "--from", "claude", "--all", "--yes").must(t, 0)
	for _, want := range []string{"✓ Saved 'remote'", "✓ Saved 'local'", "Imported 2 server(s); 0 skipped, 0 failed."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	cfg := readConfig(t, w.home)
	for _, want := range []string{"Authorization: Bearer ${MCP_REMOTE_AUTHORIZATION}", "SERVICE_API_KEY: ${MCP_LOCAL_SERVICE_API_KEY}"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config.yaml lacks %q:\n%s", want, cfg)
		}
	}
	env := w.dotEnv(t)
	for _, want := range []string{"MCP_REMOTE_AUTHORIZATION=" + token, "MCP_LOCAL_SERVICE_API_KEY=key-ImportS3cret-77"} {
		if !strings.Contains(env, want) {
			t.Errorf(".env lacks %q", want)
		}
	}
	if strings.Contains(cfg, "ImportS3cret") {
		t.Errorf("a secret is in config.yaml:\n%s", cfg)
	}
	// Outside the project, where its .mcp.json entry does not replace
	// the imported one.
	g := runInProcess(t, w.user, hermesTestEnv(t, w.home, "HOME="+w.user, "CODEX_HOME=", "XDG_CONFIG_HOME="), nil, "mcp", "get", "remote").must(t, 0)
	if !strings.Contains(g.stdout, "Bearer ${MCP_REMOTE_AUTHORIZATION}") || strings.Contains(g.stdout, "project file") {
		t.Errorf("get does not show the reference:\n%s", g.stdout)
	}
	noLeak(t, []string{"ImportS3cret"}, r, g)
}

// Without a terminal, import needs the servers named (or --all) and --yes
// or --no-probe, and says so in one line (exit 2) listing what it found.
func TestImportNonInteractiveUsage(t *testing.T) {
	t.Parallel()
	w := newImportWorld(t)
	put(t, w.user, ".cursor/mcp.json", fixture(t, "cursor/mcp.json", w.project))
	w.run(t, nil, "mcp", "import").must(t, 2).oneLineErr(t, "name the servers to import, or pass --all", "playwright, apilayer, lapras, old-server")
	w.run(t, nil, "mcp", "import", "--all").must(t, 2).oneLineErr(t, "--yes", "--no-probe")
	w.run(t, nil, "mcp", "import", "--all", "playwright").must(t, 2).oneLineErr(t, "either --all or server names")
	w.run(t, nil, "mcp", "import", "nosuch", "--no-probe").must(t, 1).oneLineErr(t, "No server 'nosuch'", "found: playwright")
	w.run(t, nil, "mcp", "import", "--from", "nosuch.json").must(t, 2).oneLineErr(t, "--from nosuch.json: no such file", "claude, codex")
	if c := readConfig(t, w.home); c != "" {
		t.Errorf("a refused import wrote config.yaml:\n%s", c)
	}
	// Nothing to read at all.
	empty := newImportWorld(t)
	empty.run(t, nil, "mcp", "import", "--all", "--yes").must(t, 1).oneLineErr(t, "No MCP servers found in", ".claude.json", "--from FILE")
}

// A server config.yaml already has is skipped with a one-line note and
// kept as it was; --force replaces it. Codex's file is read from --from
// FILE by its format; its servers are saved without connecting under
// --no-probe, a disabled one stays disabled, and --json reports each.
func TestImportSkipsExistingUnlessForce(t *testing.T) {
	t.Parallel()
	w := newImportWorld(t)
	file := filepath.Join(w.project, "codex-config.toml")
	put(t, w.project, "codex-config.toml", fixture(t, "codex/config.toml", w.project))
	writeConfig(t, w.home, "# mine\nmcp_servers:\n  figma:\n    url: https://mine.example/mcp\n")
	r := w.run(t, nil, "mcp", "import", "--from", file, "--all", "--no-probe", "--json").must(t, 0)
	if !strings.Contains(r.stderr, "Skipping 'figma' from "+file+": a server named 'figma' is already in") || !strings.Contains(r.stderr, "pass --force to replace it") {
		t.Errorf("stderr lacks the skip note:\n%s", r.stderr)
	}
	var res []struct {
		Name, Status, Client string
		Enabled              bool
		Secrets              []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	got := map[string]string{}
	for _, x := range res {
		got[x.Name] = x.Status
		if x.Client != "codex" {
			t.Errorf("%s: client %q", x.Name, x.Client)
		}
		if x.Name == "linear" && x.Enabled {
			t.Error("linear (enabled = false) was imported enabled")
		}
		if x.Name == "search" && (len(x.Secrets) != 1 || x.Secrets[0] != "MCP_SEARCH_SEARCH_API_KEY") {
			t.Errorf("search secrets %v", x.Secrets)
		}
	}
	want := map[string]string{"context7": "saved_unprobed", "figma": "skipped", "linear": "saved_unprobed", "search": "saved_unprobed"}
	if !equalMaps(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
	cfg := readConfig(t, w.home)
	if !strings.HasPrefix(cfg, "# mine\nmcp_servers:\n  figma:\n    url: https://mine.example/mcp\n") || !strings.Contains(cfg, "  linear:\n    url: https://mcp.linear.app/mcp\n    headers:\n      X-Linear-Key: ${LINEAR_API_KEY}\n    enabled: false\n") {
		t.Errorf("config.yaml:\n%s", cfg)
	}
	r = w.run(t, nil, "mcp", "import", "--from", file, "figma", "--no-probe", "--force").must(t, 0)
	if cfg := readConfig(t, w.home); !strings.Contains(cfg, "url: https://mcp.figma.com/mcp") || strings.Contains(cfg, "mine.example") {
		t.Errorf("--force did not replace figma:\n%s", cfg)
	}
	noLeak(t, []string{"s3cr3t-search-key-value"}, r)
}

// A server that fails its probe is not saved and makes the exit code 1;
// the others are imported all the same. A Gemini CLI filter (includeTools)
// is kept when nobody picks tools.
func TestImportProbeFailureDoesNotStopOthers(t *testing.T) {
	t.Parallel()
	w := newImportWorld(t)
	srv := testServerPath(t)
	put(t, w.user, ".gemini/settings.json", `{
  // a comment
  "mcpServers": {
    "broken": {"command": "/nonexistent/mcp-server"},
    "good": {"command": "`+srv+`", "includeTools": ["echo", "add"], "trust": true},
  }
}`)
	r := w.run(t, nil, "mcp", "import", "--from", "gemini", "--all", "--yes").must(t, 1)
	if !strings.Contains(r.stdout, "✗ 'broken' was not imported: Failed to connect to 'broken'") || !strings.Contains(r.stdout, "✓ Saved 'good'") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "(2/21 tools enabled)") {
		t.Errorf("the imported tools filter was not kept:\n%s", r.stdout)
	}
	r.oneLineErr(t, "1 server(s) could not be imported")
	cfg := readConfig(t, w.home)
	if strings.Contains(cfg, "broken") || !strings.Contains(cfg, "    tools:\n      include:\n        - echo\n        - add\n") {
		t.Errorf("config.yaml:\n%s", cfg)
	}
}

// Names and values from another client's file are hostile: escape
// sequences in them reach the terminal escaped, in text and JSON.
func TestImportEscapesHostileText(t *testing.T) {
	t.Parallel()
	w := newImportWorld(t)
	put(t, w.user, ".cursor/mcp.json", `{"mcpServers": {"evil\u001b]0;pwned\u0007\u001b[2J": {"command": "x\u001b[31m", "args": ["\u009b31m"], "frobnicate\u001b[1m": 1}}}`)
	for _, args := range [][]string{
		{"mcp", "import", "--dry-run"},
		{"mcp", "import", "--dry-run", "--json"},
		{"mcp", "import", "--all", "--no-probe"},
	} {
		r := w.run(t, nil, args...)
		for _, c := range []string{"\x1b", "\x07", "\u009b"} {
			if strings.Contains(r.stdout+r.stderr, c) {
				t.Errorf("%v printed a raw %q:\n%q\n%q", args, c, r.stdout, r.stderr)
			}
		}
	}
	if cfg := readConfig(t, w.home); !strings.Contains(cfg, "evil-0-pwned-2J:") {
		t.Errorf("config.yaml:\n%q", cfg)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Importing the same files again changes nothing and succeeds: every
// server is already there and skipped with a note.
func TestImportTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	w := newImportWorld(t)
	put(t, w.user, ".cursor/mcp.json", fixture(t, "cursor/mcp.json", w.project))
	w.run(t, nil, "mcp", "import", "--all", "--no-probe").must(t, 0)
	cfg, env := readConfig(t, w.home), w.dotEnv(t)
	if !strings.Contains(cfg, "LAPRAS_API_KEY: ${MCP_LAPRAS_LAPRAS_API_KEY}") || !strings.Contains(env, "MCP_LAPRAS_LAPRAS_API_KEY=lapras-0f3c9a7d2e") {
		t.Fatalf("first import:\n%s", cfg)
	}
	r := w.run(t, nil, "mcp", "import", "--all", "--no-probe").must(t, 0)
	if !strings.Contains(r.stdout, "Nothing to import") || strings.Count(r.stdout, "Skipping '") != 4 {
		t.Errorf("second import:\n%s", r.stdout)
	}
	if readConfig(t, w.home) != cfg || w.dotEnv(t) != env {
		t.Error("the second import changed config.yaml or .env")
	}
}

// A client file over the size limit (Claude Code's ~/.claude.json also
// keeps histories) is skipped with a warning that says what to do; the
// other clients' servers are still imported.
func TestImportSkipsOversizedFile(t *testing.T) {
	t.Parallel()
	w := newImportWorld(t)
	big := `{"mcpServers": {}, "history": "` + strings.Repeat("x", 4<<20) + `"}`
	put(t, w.user, ".claude.json", big)
	put(t, w.user, ".cursor/mcp.json", `{"mcpServers": {"one": {"command": "x"}}}`)
	r := w.run(t, nil, "mcp", "import", "--all", "--no-probe").must(t, 0)
	if !strings.Contains(r.stdout, "Skipped "+filepath.Join(w.user, ".claude.json")+": it is over the 4 MiB") || !strings.Contains(r.stdout, "--from FILE") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if !strings.Contains(readConfig(t, w.home), "  one:\n    command: x\n") {
		t.Errorf("config.yaml:\n%s", readConfig(t, w.home))
	}
}

// A .env variable that already holds another value is never overwritten:
// the imported secret gets a variable of its own.
func TestImportKeepsOtherDotEnvValues(t *testing.T) {
	t.Parallel()
	w := newImportWorld(t)
	put(t, w.user, ".cursor/mcp.json", fixture(t, "cursor/mcp.json", w.project))
	put(t, w.home, ".env", "MCP_LAPRAS_LAPRAS_API_KEY=somebody-elses\n")
	w.run(t, nil, "mcp", "import", "lapras", "--no-probe").must(t, 0)
	if env := w.dotEnv(t); env != "MCP_LAPRAS_LAPRAS_API_KEY=somebody-elses\nMCP_LAPRAS_LAPRAS_API_KEY_2=lapras-0f3c9a7d2e\n" {
		t.Errorf(".env:\n%s", env)
	}
	if cfg := readConfig(t, w.home); !strings.Contains(cfg, "LAPRAS_API_KEY: ${MCP_LAPRAS_LAPRAS_API_KEY_2}") {
		t.Errorf("config.yaml:\n%s", cfg)
	}
}
