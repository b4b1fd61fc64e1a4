package cli_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"
	"github.com/hermes-agent/hermes/host/cli/mcp/add"
	"github.com/hermes-agent/hermes/host/config"
)

func TestSplitAddArgs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		in           []string
		front, child []string
		sep          string
	}{
		{"no separator", []string{"x", "--command", "npx"}, []string{"x", "--command", "npx"}, nil, add.SepNone},
		{"args", []string{"x", "--command", "npx", "--args", "-y", "--env", "A=1", "pkg"},
			[]string{"x", "--command", "npx"}, []string{"-y", "--env", "A=1", "pkg"}, add.SepArgs},
		{"double dash", []string{"x", "--command", "npx", "--", "-y", "--help"},
			[]string{"x", "--command", "npx"}, []string{"-y", "--help"}, add.SepDashDash},
		{"args then dash dash dropped once", []string{"x", "--args", "--", "--", "a"},
			[]string{"x"}, []string{"--", "a"}, add.SepArgs},
		{"args=", []string{"x", "--args=-y", "pkg"}, []string{"x"}, []string{"-y", "pkg"}, add.SepArgs},
		{"value that looks like the separator", []string{"x", "--cwd", "--args", "--env", "A=1"},
			[]string{"x", "--cwd", "--args", "--env", "A=1"}, nil, add.SepNone},
		{"empty args", []string{"x", "--command", "c", "--args"}, []string{"x", "--command", "c"}, []string{}, add.SepArgs},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			front, child, sep := add.SplitAddArgs(c.in)
			if !slices.Equal(front, c.front) || !slices.Equal(child, c.child) || sep != c.sep {
				t.Errorf("SplitAddArgs(%q) = %q, %q, %q; want %q, %q, %q", c.in, front, child, sep, c.front, c.child, c.sep)
			}
		})
	}
}

func TestAPIKeyVarAndTokenFileBase(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"ink": "MCP_INK_API_KEY", "my-server": "MCP_MY_SERVER_API_KEY", "_x_": "MCP_X_API_KEY"} {
		if got := cmdkit.APIKeyVar(in); got != want {
			t.Errorf("APIKeyVar(%q) = %q, want %q", in, got, want)
		}
	}
	// Token file stems are one-to-one: a valid server name is its own
	// stem (no trimming, no cut), anything else is escaped with "%".
	long := strings.Repeat("a", 200)
	for in, want := range map[string]string{
		"ink": "ink", "my-server": "my-server", "_a": "_a", "a_": "a_", "___": "___", long: long,
		"../etc/passwd": "%2E%2E%2Fetc%2Fpasswd", "a b.c": "a%20b%2Ec", "": "%", "..": "%2E%2E", "%41": "%2541",
	} {
		if got := cmdkit.TokenFileBase(in); got != want {
			t.Errorf("TokenFileBase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAddStdioYes(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	srv := testServerPath(t)
	r := runHermes(t, home, "mcp", "add", "ts", "--command", srv, "--yes", "--", "--tools", "2").must(t, 0)
	for _, want := range []string{
		"  ✓ Connected! Found 23 tool(s) from 'ts':\n",
		"    echo                                     Returns the message verbatim.\n",
		"  ✓ Saved 'ts' to " + filepath.Join(home, "config.yaml") + " (23/23 tools enabled)\n",
		"  Use them now: 'hermes mcp call ts <tool>' or 'hermes chat' (/reload-mcp in a running chat).\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	want := "mcp_servers:\n  ts:\n    command: " + srv + "\n    args:\n      - --tools\n      - \"2\"\n"
	if got := readConfig(t, home); got != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}
}

func TestAddKeepsHandWrittenConfig(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	srv := testServerPath(t)
	orig := "# my settings\nmodel:\n  default: gpt-x   # keep me\n\nmcp_servers:\n  # the first one\n  first:\n    command: foo\n    args: [\"a\", \"b\"]\n\n# trailing comment\nother: 1\n"
	writeConfig(t, home, orig)
	runHermes(t, home, "mcp", "add", "second", "--command", srv, "--tools", "echo,add").must(t, 0)
	want := strings.Replace(orig, "    args: [\"a\", \"b\"]\n",
		"    args: [\"a\", \"b\"]\n  second:\n    command: "+srv+"\n    tools:\n      include:\n        - echo\n        - add\n", 1)
	if got := readConfig(t, home); got != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}
}

func TestAddToolsSubset(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	r := runHermes(t, home, "mcp", "add", "ts", "--command", testServerPath(t), "--tools", "echo, tool_*", "--", "--tools", "3").must(t, 0)
	if !strings.Contains(r.stdout, "(4/24 tools enabled)") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	cfg := loadConfig(t, home)
	if got := cfg.Server("ts").Tools.Include; !slices.Equal(got, []string{"echo", "tool_*"}) {
		t.Errorf("include = %q", got)
	}
}

// loadConfig reads the config of home.
func loadConfig(t *testing.T, home string) *config.Config {
	t.Helper()
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestAddToolsMustExist(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	r := runHermes(t, home, "mcp", "add", "ts", "--command", testServerPath(t), "--tools", "echo,nope").must(t, 1)
	r.oneLineErr(t, "'ts' has no tool matching 'nope'", "available tools: add, add_tool,", "echo")
	if got := readConfig(t, home); got != "" {
		t.Errorf("config written:\n%s", got)
	}
}

func TestAddToolsAllMeansNoFilter(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	runHermes(t, home, "mcp", "add", "ts", "--command", testServerPath(t), "--tools", "*").must(t, 0)
	if got := loadConfig(t, home).Server("ts").Tools.Include; got != nil {
		t.Errorf("include = %q, want no filter", got)
	}
}

func TestAddNoProbe(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	r := runHermes(t, home, "mcp", "add", "later", "--command", "/nonexistent/server", "--no-probe").must(t, 0)
	if !strings.Contains(r.stdout, "✓ Saved 'later'") || strings.Contains(r.stdout, "Connecting") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if got, want := readConfig(t, home), "mcp_servers:\n  later:\n    command: /nonexistent/server\n"; got != want {
		t.Errorf("config.yaml:\n%q\nwant:\n%q", got, want)
	}
}

func TestAddProbeFailureNonInteractive(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	orig := "mcp_servers:\n  a:\n    command: x # note\n"
	writeConfig(t, home, orig)
	r := runHermes(t, home, "mcp", "add", "bad", "--command", testServerPath(t), "--args", "--fail-start", "kaboom").must(t, 1)
	r.oneLineErr(t, "Failed to connect to 'bad'", "kaboom", "nothing was saved", "--no-probe")
	if got := readConfig(t, home); got != orig {
		t.Errorf("config changed:\n%s", got)
	}
}

func TestAddOverwrite(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	srv := testServerPath(t)
	runHermes(t, home, "mcp", "add", "ts", "--command", "/old", "--no-probe").must(t, 0)
	before := readConfig(t, home)
	r := runHermes(t, home, "mcp", "add", "ts", "--command", srv, "--no-probe").must(t, 1)
	r.oneLineErr(t, "Server 'ts' already exists", "pass --yes to overwrite it")
	if got := readConfig(t, home); got != before {
		t.Errorf("config changed:\n%s", got)
	}
	runHermes(t, home, "mcp", "add", "ts", "--command", srv, "--yes").must(t, 0)
	if got := loadConfig(t, home).Server("ts").Command; got != srv {
		t.Errorf("command = %q after overwrite", got)
	}
}

func TestAddArgsAndEnvVerbatim(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	runHermes(t, home, "mcp", "add", "v", "--command", "npx", "--env", "A=1", "--env", "B=two,three", "--env", "EMPTY=",
		"--cwd", "/srv", "--no-probe", "--", "-y", "--env", "C=3", "--no-probe", "two words", "--", "-x").must(t, 0)
	want := "mcp_servers:\n  v:\n    command: npx\n    args:\n      - -y\n      - --env\n      - C=3\n      - --no-probe\n      - two words\n      - --\n      - -x\n" +
		"    env:\n      A: \"1\"\n      B: two,three\n      EMPTY: \"\"\n    cwd: /srv\n"
	if got := readConfig(t, home); got != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}
}

func TestAddEnvReachesServer(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	r := runHermes(t, home, "mcp", "add", "ts", "--command", testServerPath(t), "--env", "A=1", "--env", "B=two,three", "--yes", "--", "--tools", "3").must(t, 0)
	if !strings.Contains(r.stdout, "Found 24 tool(s)") {
		t.Errorf("the child did not get --tools 3:\n%s", r.stdout)
	}
	for k, want := range map[string]string{"A": "1", "B": "two,three"} {
		out := runHermes(t, home, "mcp", "call", "ts", "env", "--arg", "name="+k).must(t, 0)
		if strings.TrimSpace(out.stdout) != want {
			t.Errorf("%s = %q, want %q", k, out.stdout, want)
		}
	}
}

func TestAddPreset(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	srv := testServerPath(t)
	runHermes(t, home, "mcp", "add", "cx", "--preset", "codex", "--no-probe").must(t, 0)
	runHermes(t, home, "mcp", "add", "cx2", "--preset", "codex", "--no-probe", "--args", "--flag").must(t, 0)
	runHermes(t, home, "mcp", "add", "cx3", "--preset", "codex", "--command", srv, "--yes").must(t, 0)
	want := "mcp_servers:\n  cx:\n    command: codex\n    args:\n      - mcp-server\n" +
		"  cx2:\n    command: codex\n    args:\n      - --flag\n" +
		"  cx3:\n    command: " + srv + "\n"
	if got := readConfig(t, home); got != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}
	runHermes(t, home, "mcp", "add", "u", "--preset", "nope", "--no-probe").must(t, 2).oneLineErr(t, "Unknown MCP preset: nope")
}

func TestAddUsageErrors(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"x", "--command", "c", "--env", "NOVALUE"}, "Invalid --env value 'NOVALUE' (expected KEY=VALUE)"},
		{[]string{"x", "--command", "c", "--env", "=v"}, "Invalid --env value '=v' (missing variable name)"},
		{[]string{"x", "--command", "c", "--env", "1BAD=v"}, "Invalid --env variable name '1BAD'"},
		{[]string{"x", "--command", "c", "--env", "A-B=v"}, "Invalid --env variable name 'A-B'"},
		{[]string{"x", "--url", "http://h/mcp", "--env", "A=1"}, "--env is only supported for stdio MCP servers (--command or stdio presets)"},
		{[]string{"x"}, "Must specify --url <endpoint>, --command <cmd>, or --preset <name>"},
		{[]string{"bad name", "--command", "c"}, "invalid server name 'bad name'"},
		{[]string{"x", "--command", "c", "--url", "http://h"}, "not both"},
		{[]string{"x", "--url", "http://h", "--header", "nocolon"}, "Invalid --header value 'nocolon'"},
		{[]string{"x", "--command", "c", "--bogus"}, "hermes mcp add: unknown flag --bogus"},
		{[]string{"--command", "c"}, "usage: hermes mcp add <name>"},
	}
	for _, c := range cases {
		r := runHermes(t, home, append([]string{"mcp", "add"}, c.args...)...)
		if r.code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", c.args, r.code, r.stderr)
			continue
		}
		r.oneLineErr(t, c.want)
	}
	if _, err := os.Stat(filepath.Join(home, "config.yaml")); err == nil {
		t.Error("a usage error wrote config.yaml")
	}
}

func TestAddHTTPWithHeader(t *testing.T) {
	t.Parallel()
	// Not in parallel: sets variables hermes reads from the process.
	home := newHome(t)
	url := startHTTPServer(t, "--require-bearer", "tok-123")
	// Without the token the probe fails and nothing is saved.
	runHermes(t, home, "mcp", "add", "web", "--url", url, "--yes").must(t, 1).oneLineErr(t, "Failed to connect to 'web'", "--auth oauth")
	env := []string{"WEB_TOKEN=tok-123"}
	r := runHermesEnv(t, home, env, "mcp", "add", "web", "--url", url, "--header", "Authorization: Bearer ${WEB_TOKEN}", "--yes").must(t, 0)
	if !strings.Contains(r.stdout, "✓ Connected! Found 21 tool(s) from 'web':") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	want := "mcp_servers:\n  web:\n    url: " + url + "\n    headers:\n      Authorization: Bearer ${WEB_TOKEN}\n"
	if got := readConfig(t, home); got != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}
}

// add --auth oauth --no-probe records the method and the oauth: block
// (the client secret in .env, referenced), logs in to nothing and says how
// to; --auth exec records the method and says to write its block.
func TestAddOAuthNoProbe(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	r := runHermes(t, home, "mcp", "add", "o", "--url", "https://example.invalid/mcp", "--auth", "oauth",
		"--client-id", "cid", "--client-secret", "s3cret-value", "--scope", "mcp:read", "--no-probe").must(t, 0)
	if !strings.Contains(r.stdout, "Log in with: hermes mcp login o") || strings.Contains(r.stdout, "s3cret-value") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if got, want := readConfig(t, home), "mcp_servers:\n  o:\n    url: https://example.invalid/mcp\n    auth: oauth\n    oauth:\n      client_id: cid\n      client_secret: ${MCP_O_CLIENT_SECRET}\n      scope: mcp:read\n"; got != want {
		t.Errorf("config.yaml:\n%q\nwant %q", got, want)
	}
	if env, _ := os.ReadFile(filepath.Join(home, ".env")); string(env) != "MCP_O_CLIENT_SECRET=s3cret-value\n" {
		t.Errorf(".env: %q", env)
	}
	if srv := loadConfig(t, home).Server("o"); srv.OAuth.ClientSecret != "s3cret-value" || srv.OAuth.ClientID != "cid" {
		t.Errorf("oauth settings: %+v", srv.OAuth)
	}
	r = runHermes(t, home, "mcp", "add", "x", "--url", "https://example.invalid/mcp", "--auth", "exec").must(t, 0)
	if !strings.Contains(r.stdout, "Saved 'x'") || !strings.Contains(r.stdout, "Add its exec: block to 'x'") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	for _, c := range [][]string{
		{"--client-id", "c"}, {"--scope", "s"}, {"--client-secret", "s", "--auth", "header"},
	} {
		r := runHermes(t, home, append([]string{"mcp", "add", "y", "--url", "https://example.invalid/mcp"}, c...)...).must(t, 2)
		r.oneLineErr(t, "is only for --auth oauth")
	}
	runHermes(t, home, "mcp", "add", "y", "--url", "https://example.invalid/mcp", "--auth", "exec", "--device").must(t, 2).oneLineErr(t, "--device are for logging in")
	runHermes(t, home, "mcp", "add", "y", "--url", "https://example.invalid/mcp", "--auth", "Bad Name").must(t, 2).oneLineErr(t, "unknown --auth 'Bad Name'")
}

// TestAddTransportSpellings: --transport is read by the one transport-name
// rule, so "STDIO" or " stdio" is stdio (it was refused as "only for --url
// servers"), and a remote transport on a command is still refused.
func TestAddTransportSpellings(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	runHermes(t, home, "mcp", "add", "a", "--command", "/nonexistent/server", "--transport", "STDIO", "--no-probe").must(t, 0)
	r := runHermes(t, home, "mcp", "add", "b", "--command", "/nonexistent/server", "--transport", "streamable-http", "--no-probe")
	if r.code != 2 {
		t.Fatalf("--transport streamable-http with --command: exit %d, want 2 (stderr %q)", r.code, r.stderr)
	}
	r.oneLineErr(t, "--transport is only for --url servers")
}

// TestAddDashDashCommand: 'hermes mcp add NAME -- CMD ARGS...', the form
// other MCP clients use, saves CMD as the command and the rest as its argv
// (it was refused with "Must specify --url, --command or --preset").
func TestAddDashDashCommand(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	runHermes(t, home, "mcp", "add", "ev", "--no-probe", "--", "node", "server.js", "--tools", "x").must(t, 0)
	if got, want := readConfig(t, home), "mcp_servers:\n  ev:\n    command: node\n    args:\n      - server.js\n      - --tools\n      - x\n"; got != want {
		t.Errorf("config.yaml:\n%q\nwant:\n%q", got, want)
	}
}

// TestAddArgsRefusesHermesFlagsWithoutTerminal: without a terminal,
// hermes's own flags written after --args are a usage error (exit 2) that
// names them and the two ways to write what was meant, and nothing is
// saved: --env API_KEY=... was saved into args and printed unmasked, and
// --no-probe there did not stop the probe (rc 0 either way).
func TestAddArgsRefusesHermesFlagsWithoutTerminal(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	r := runHermes(t, home, "mcp", "add", "ev", "--command", "node", "--no-probe", "--args", "server.js", "--env", "API_KEY=sk-live-0123456789abcdef0123", "--tools", "echo")
	r.must(t, 2)
	for _, want := range []string{"--env --tools after --args would be saved as the server's own arguments", "put hermes's flags before --args", "hermes mcp add ev [flags] -- CMD ARGS..."} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "sk-live-0123456789abcdef0123") {
		t.Errorf("the secret was printed:\n%s%s", r.stdout, r.stderr)
	}
	if got := readConfig(t, home); strings.Contains(got, "ev:") {
		t.Errorf("saved although refused:\n%s", got)
	}
	// The -- form gives them to the server, as asked.
	runHermes(t, home, "mcp", "add", "ev", "--no-probe", "--", "node", "server.js", "--tools", "echo").must(t, 0)
	// npx's -y is npx's: no question.
	runHermes(t, home, "mcp", "add", "ok", "--command", "npx", "--no-probe", "--args", "-y", "pkg", "--port", "3").must(t, 0)
}

// TestAddHeaderSecretGoesToDotEnv: a bearer token written out in --header
// goes to .env, as add-json and import move secrets, and the entry refers
// to it (it was written into config.yaml without a word); the probe still
// connects with it, and the output says where it went without showing it.
// A secret --env value goes the same way; a plain one stays.
func TestAddHeaderSecretGoesToDotEnv(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	url := startHTTPServer(t, "--require-bearer", "tok-Literal-0123456789")
	r := runHermes(t, home, "mcp", "add", "web", "--url", url, "--header", "Authorization: Bearer tok-Literal-0123456789", "--yes").must(t, 0)
	if !strings.Contains(r.stdout, "✓ Connected!") || !strings.Contains(r.stdout, "Secret of header Authorization saved to "+home+"/.env as MCP_WEB_AUTHORIZATION") || strings.Contains(r.stdout+r.stderr, "tok-Literal-0123456789") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	want := "mcp_servers:\n  web:\n    url: " + url + "\n    headers:\n      Authorization: Bearer ${MCP_WEB_AUTHORIZATION}\n"
	if got := readConfig(t, home); got != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}
	runHermes(t, home, "mcp", "add", "loc", "--command", "/nonexistent/server", "--env", "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "--env", "LOG_LEVEL=debug", "--no-probe").must(t, 0)
	cfg := readConfig(t, home)
	if !strings.Contains(cfg, "GITHUB_TOKEN: ${MCP_LOC_GITHUB_TOKEN}") || !strings.Contains(cfg, "LOG_LEVEL: debug") || strings.Contains(cfg, "ghp_") {
		t.Errorf("config.yaml:\n%s", cfg)
	}
	dotenv, err := os.ReadFile(filepath.Join(home, ".env"))
	if err != nil || !strings.Contains(string(dotenv), "MCP_WEB_AUTHORIZATION=tok-Literal-0123456789") || !strings.Contains(string(dotenv), "MCP_LOC_GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789") {
		t.Errorf(".env (%v):\n%s", err, dotenv)
	}
}

// TestArgvSecretsMasked: a token written out in a server's argv (as 'add
// NAME -- CMD ...' saves it) is masked wherever the argv is shown: get,
// get --json, list --json. It was printed as written.
func TestArgvSecretsMasked(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	const tok, key = "zz-custom-secret-4242", "sk-live-0123456789abcdef0123"
	runHermes(t, home, "mcp", "add", "ev", "--no-probe", "--", "node", "server.js", "--token", tok, "API_KEY="+key, "--port", "3000").must(t, 0)
	if got := readConfig(t, home); !strings.Contains(got, tok) {
		t.Fatalf("the argv was not saved as written:\n%s", got)
	}
	for _, args := range [][]string{{"mcp", "get", "ev"}, {"mcp", "get", "ev", "--json"}, {"mcp", "list"}, {"mcp", "list", "--json"}} {
		r := runHermes(t, home, args...).must(t, 0)
		out := r.stdout + r.stderr
		if strings.Contains(out, tok) || strings.Contains(out, key) {
			t.Errorf("hermes %s shows a secret of the argv:\n%s", strings.Join(args, " "), out)
		}
		if args[1] == "get" && (!strings.Contains(out, "server.js") || !strings.Contains(out, "3000")) {
			t.Errorf("hermes %s hides the rest of the argv:\n%s", strings.Join(args, " "), out)
		}
	}
}

// TestAddTimesTakeBothForms: --connect-timeout and --timeout take seconds
// or a duration ("5s" was refused as not a whole number), and config.yaml
// gets seconds; a value that is neither is one line naming both forms.
func TestAddTimesTakeBothForms(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	runHermes(t, home, "mcp", "add", "ev", "--command", "node", "--connect-timeout", "5s", "--timeout", "300", "--no-probe").must(t, 0)
	runHermes(t, home, "mcp", "add", "ev2", "--command", "node", "--connect-timeout", "1m30s", "--timeout", "2.5", "--no-probe").must(t, 0)
	got := readConfig(t, home)
	for _, want := range []string{"ev:\n    command: node\n    connect_timeout: 5\n    timeout: 300\n", "ev2:\n    command: node\n    connect_timeout: 90\n    timeout: 2.5\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("config.yaml lacks %q:\n%s", want, got)
		}
	}
	r := runHermes(t, home, "mcp", "add", "ev3", "--command", "node", "--connect-timeout", "soon", "--no-probe")
	r.must(t, 2).oneLineErr(t, "--connect-timeout", "seconds (30) or a duration (30s, 2m)")
	// A config.yaml time key takes both forms too.
	writeConfig(t, home, "mcp_servers:\n  ev:\n    command: node\n    connect_timeout: 2m\n")
	runHermes(t, home, "mcp", "get", "ev").must(t, 0)
}

// TestAddTimeoutSaysWhatToRaise: a server that does not answer within the
// probe's connect timeout fails with the flag that gives it more time
// (slow first starts failed with only "within 30s (connect_timeout)").
func TestAddTimeoutSaysWhatToRaise(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	r := runHermes(t, home, "mcp", "add", "slow", "--connect-timeout", "5", "--yes", "--", "sh", "-c", "sleep 600")
	r.must(t, 1).oneLineErr(t, "(connect_timeout)", "add it again with --connect-timeout 2m", "nothing was saved")
}
