package cli_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/json/*.golden from what the commands print")

// jsonGoldenConfig has a server in each state a command can report
// without a network: one the test server answers (TS), a disabled one, one
// whose ${VAR} is set nowhere, one whose executable is missing, one the
// security check rejects and one that cannot be used as written.
const jsonGoldenConfig = `mcp_servers:
  ts:
    command: TS
    tools:
      include: [echo, add]
  off:
    command: TS
    enabled: false
    tools:
      exclude: [add]
  vars:
    url: http://127.0.0.1:9/mcp
    headers:
      Authorization: Bearer ${GOLDEN_UNSET_TOKEN}
  gone:
    command: /nonexistent/golden-mcp-server
  ioc:
    command: /opt/hermes-0day/run
  broken:
    url: 5
    command: [1]
`

// jsonCase is one command of the golden test: what it prints on stdout
// with --json must equal testdata/json/<name>.golden once normalised.
type jsonCase struct {
	name string
	args []string
	code int
}

// TestJSONGolden runs every command that takes --json, in an order where
// each changing command sees what the ones before it left, and compares
// its output with its golden file. go test -run TestJSONGolden ./host/cli
// -update rewrites the files; TestJSONSchema checks them against the
// documented types.
func TestJSONGolden(t *testing.T) {
	t.Parallel()
	ts := testServerPath(t)
	home := newHome(t)
	writeConfig(t, home, strings.ReplaceAll(jsonGoldenConfig, "TS", ts))
	// Files a login left for a server without auth: (auth-status: unused).
	if err := os.MkdirAll(filepath.Join(home, "mcp-tokens"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "mcp-tokens", "ts.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	emptyCatalog := t.TempDir()
	env := []string{"HERMES_OPTIONAL_MCPS=" + emptyCatalog}

	cases := []jsonCase{
		{"list", []string{"mcp", "list"}, 0},
		{"get", []string{"mcp", "get", "ts"}, 0},
		{"test", []string{"mcp", "test", "ts"}, 0},
		{"test-missing-command", []string{"mcp", "test", "gone"}, 1},
		{"test-unknown-server", []string{"mcp", "test", "nope"}, 1},
		{"tools", []string{"tools"}, 0},
		{"auth-status", []string{"mcp", "auth-status"}, 0},
		{"catalog", []string{"mcp", "catalog"}, 0},
		{"enable", []string{"mcp", "enable", "off"}, 0},
		{"enable-unchanged", []string{"mcp", "enable", "off"}, 0},
		{"enable-unknown-server", []string{"mcp", "enable", "nope"}, 1},
		{"disable", []string{"mcp", "disable", "off"}, 0},
		{"configure", []string{"mcp", "configure", "ts", "--exclude", "add"}, 0},
		{"add", []string{"mcp", "add", "added", "--tools", "echo", "--command", ts}, 0},
		{"add-failed-probe", []string{"mcp", "add", "down", "--command", "/nonexistent/golden-mcp-server"}, 1},
		{"remove", []string{"mcp", "remove", "gone", "--yes"}, 0},
		{"install-unknown-entry", []string{"mcp", "install", "nope", "--yes"}, 1},
		{"uninstall-not-installed", []string{"mcp", "uninstall", "ts", "--yes"}, 1},
	}
	for _, c := range cases {
		args := append(append([]string(nil), c.args...), "--json")
		if c.args[0] == "mcp" && c.args[1] == "add" {
			// add's own flags come before the server's argv.
			args = append([]string{"mcp", "add", "--json"}, c.args[2:]...)
		}
		r := runHermesEnv(t, home, env, args...).must(t, c.code)
		checkGolden(t, c.name, strings.ReplaceAll(r.stdout, emptyCatalog, "$CATALOG"), home)
	}

	// A config.yaml that cannot be read fails every command alike.
	bad := newHome(t)
	writeConfig(t, bad, "mcp_servers: [not, a, mapping\n")
	checkGolden(t, "list-config-error", runHermes(t, bad, "mcp", "list", "--json").must(t, 1).stdout, bad)

	// Usage errors stay one line on stderr: no JSON.
	r := runHermes(t, home, "mcp", "configure", "ts", "--json").must(t, 2)
	if r.stdout != "" {
		t.Errorf("a usage error printed on stdout: %q", r.stdout)
	}
	r.oneLineErr(t, "--include")
}

var (
	latencyRE = regexp.MustCompile(`"latency_ms": [0-9]+`)
	expiresRE = regexp.MustCompile(`"expires_in_seconds": -?[0-9]+`)
	// When a record of what a server offered was made (cached_at,
	// fetched_at).
	recordAtRE = regexp.MustCompile(`"(cached_at|fetched_at)": "[^"]*"`)
)

// normaliseJSON replaces what changes from run to run: the home folder,
// the folder of the built binaries, timings.
func normaliseJSON(t *testing.T, out, home string) string {
	out = strings.ReplaceAll(out, home, "$HERMES_HOME")
	out = strings.ReplaceAll(out, testbin.Dir(t), "$BIN")
	out = latencyRE.ReplaceAllString(out, `"latency_ms": 0`)
	out = recordAtRE.ReplaceAllString(out, `"$1": "2026-01-01T00:00:00Z"`)
	return expiresRE.ReplaceAllString(out, `"expires_in_seconds": 0`)
}

// checkGolden compares out (normalised) with testdata/json/name.golden,
// or rewrites the file with -update.
func checkGolden(t *testing.T, name, out, home string) {
	t.Helper()
	got := normaliseJSON(t, out, home)
	path := filepath.Join("testdata", "json", name+".golden")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run: go test -run TestJSONGolden ./host/cli -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s --json differs from %s (rewrite it with -update if the change is meant):\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}
