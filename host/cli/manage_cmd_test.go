package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const threeServers = `# servers
mcp_servers:
  alpha:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
  beta:
    url: https://mcp.example.com/mcp
    headers:
      Authorization: "Bearer ${BETA_TOKEN_FOR_TEST}"
    tools:
      include: [a, b]
  gamma:   # off for now
    command: uvx
    args: [thing]
    enabled: false
    tools:
      exclude: [x]
model: m
`

func TestRemove(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, threeServers)
	dir := filepath.Join(home, "mcp-tokens")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"beta.json", "beta.client.json", "beta.meta.json", "alpha.json", "beta.json.keep"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Without a terminal a removal needs --yes.
	runHermes(t, home, "mcp", "remove", "beta").must(t, 2).oneLineErr(t, "no terminal to confirm on; add --yes to remove 'beta'")
	r := runHermes(t, home, "mcp", "remove", "beta", "--yes").must(t, 0)
	if r.stdout != "  ✓ Removed 'beta' from config\n  ✓ Cleaned up OAuth tokens\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	want := strings.Replace(threeServers, "  beta:\n    url: https://mcp.example.com/mcp\n    headers:\n      Authorization: \"Bearer ${BETA_TOKEN_FOR_TEST}\"\n    tools:\n      include: [a, b]\n", "", 1)
	if got := readConfig(t, home); got != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}
	left, _ := os.ReadDir(dir)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"alpha.json", "beta.json.keep"}) {
		t.Errorf("token files left: %q", names)
	}

	runHermes(t, home, "mcp", "rm", "nope", "--yes").must(t, 1).oneLineErr(t, "no server named 'nope'; configured: alpha, gamma")
	runHermes(t, home, "mcp", "remove", "alpha", "--yes").must(t, 0)
	runHermes(t, home, "mcp", "remove", "gamma", "--yes").must(t, 0)
	// The comment above mcp_servers goes with the key.
	if got := readConfig(t, home); got != "model: m\n" {
		t.Errorf("after removing all: %q", got)
	}
	runHermes(t, home, "mcp", "remove", "gamma").must(t, 1).oneLineErr(t, "no server named 'gamma': no MCP servers are configured", "hermes mcp add")
	runHermes(t, home, "mcp", "remove").must(t, 2)
}

func TestList(t *testing.T) {
	t.Parallel()
	// Not in parallel: sets variables hermes reads from the process.
	home := newHome(t)
	r := runHermes(t, home, "mcp", "list").must(t, 0)
	if !strings.HasPrefix(r.stdout, "  No MCP servers configured.\n") || !strings.Contains(r.stdout, "hermes mcp add <name> --url <endpoint>") {
		t.Errorf("empty list:\n%s", r.stdout)
	}
	if r := runHermes(t, home, "mcp", "list", "--json").must(t, 0); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("empty json %q", r.stdout)
	}
	// broken is an entry that cannot be used.
	writeConfig(t, home, strings.Replace(threeServers, "model: m\n", "  broken:\n    url: 5\n    command: [1]\nmodel: m\n", 1))
	r = runHermes(t, home, "mcp", "list").must(t, 0)
	lines := strings.Split(r.stdout, "\n")
	want := []string{
		"  MCP Servers:",
		"  Name   Transport                   Tools       Status",
		"  ────── ─────────────────────────── ─────────── ───",
		"  alpha  npx … /tmp                  all         ✓ enabled",
		"  beta   https://mcp.example.com/mcp 2 selected  ⚠ needs ${BETA_TOKEN_FOR_TEST}",
		"  gamma  uvx thing                   -1 excluded ✗ disabled",
	}
	for i, w := range want {
		if i >= len(lines) || !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d:\n got %q\nwant %q\nall:\n%s", i, lineAt(lines, i), w, r.stdout)
		}
	}
	if len(lines) < 7 || !strings.HasPrefix(lines[6], "  broken 5                           all         ✗ server \"broken\": key \"command\"") {
		t.Errorf("invalid entry row: %q", lineAt(lines, 6))
	}

	r = runHermes(t, home, "mcp", "list", "--json").must(t, 0)
	var got []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(got) != 4 {
		t.Fatalf("%d entries", len(got))
	}
	tools := func(e map[string]any, key string) []string {
		sel, _ := e["tools"].(map[string]any)
		return toStrings(sel[key])
	}
	if got[0]["name"] != "alpha" || got[0]["transport"] != "stdio" || got[0]["state"] != "configured" || len(tools(got[0], "include"))+len(tools(got[0], "exclude")) != 0 {
		t.Errorf("alpha: %v", got[0])
	}
	if got[1]["state"] != "needs_env" || !slices.Equal(toStrings(got[1]["needs_env"]), []string{"BETA_TOKEN_FOR_TEST"}) ||
		!slices.Equal(tools(got[1], "include"), []string{"a", "b"}) || got[1]["transport"] != "http" {
		t.Errorf("beta: %v", got[1])
	}
	if got[2]["state"] != "disabled" || got[2]["enabled"] != false || len(tools(got[2], "exclude")) != 1 {
		t.Errorf("gamma: %v", got[2])
	}
	if je, _ := got[3]["error"].(map[string]any); got[3]["state"] != "invalid" || je["code"] != "config" || je["message"] == "" {
		t.Errorf("broken: %v", got[3])
	}
	// With the variable set, beta is fine, and nothing leaks its value.
	r = runHermesEnv(t, home, []string{"BETA_TOKEN_FOR_TEST=s3cr3t-value"}, "mcp", "list", "--json").must(t, 0)
	if strings.Contains(r.stdout, "s3cr3t") {
		t.Error("list printed a secret")
	}
}

func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func TestConfigureWithFlags(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, threeServers)
	runHermes(t, home, "mcp", "configure", "alpha", "--include", "read_file, list_dir").must(t, 0)
	if got := loadConfig(t, home).Server("alpha").Tools.Include; !slices.Equal(got, []string{"read_file", "list_dir"}) {
		t.Errorf("include = %q", got)
	}
	runHermes(t, home, "mcp", "configure", "alpha", "--exclude", "delete_*").must(t, 0)
	s := loadConfig(t, home).Server("alpha")
	if s.Tools.Include != nil || !slices.Equal(s.Tools.Exclude, []string{"delete_*"}) {
		t.Errorf("after --exclude: %+v", s.Tools)
	}
	runHermes(t, home, "mcp", "configure", "alpha", "--all").must(t, 0)
	if got := readConfig(t, home); got != threeServers {
		t.Errorf("--all did not restore the file:\n%s", got)
	}
	if r := runHermes(t, home, "mcp", "configure", "alpha", "--all").must(t, 0); !strings.Contains(r.stdout, "No changes made.") {
		t.Errorf("stdout %q", r.stdout)
	}
	runHermes(t, home, "mcp", "configure", "alpha", "--all", "--include", "a").must(t, 2).oneLineErr(t, "mutually exclusive")
	runHermes(t, home, "mcp", "configure", "alpha", "--include", ",").must(t, 2)
	runHermes(t, home, "mcp", "configure", "alpha").must(t, 1).oneLineErr(t, "interactive terminal", "--include a,b", "--exclude c,d", "--all")
	runHermes(t, home, "mcp", "configure", "nope", "--all").must(t, 1).oneLineErr(t, "no server named 'nope'; configured: alpha, beta, gamma")
	if got := readConfig(t, home); got != threeServers {
		t.Errorf("failed commands changed the file:\n%s", got)
	}
}

func TestEnableDisable(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, threeServers)
	runHermes(t, home, "mcp", "disable", "alpha").must(t, 0)
	if loadConfig(t, home).Server("alpha").Enabled {
		t.Error("alpha still enabled")
	}
	if r := runHermes(t, home, "mcp", "disable", "alpha").must(t, 0); !strings.Contains(r.stdout, "already disabled") {
		t.Errorf("stdout %q", r.stdout)
	}
	runHermes(t, home, "mcp", "enable", "gamma").must(t, 0)
	runHermes(t, home, "mcp", "enable", "alpha").must(t, 0)
	cfg := loadConfig(t, home)
	if !cfg.Server("alpha").Enabled || !cfg.Server("gamma").Enabled {
		t.Error("not enabled")
	}
	if got := readConfig(t, home); !strings.Contains(got, "  gamma:   # off for now\n") || !strings.HasPrefix(got, "# servers\n") {
		t.Errorf("comments lost:\n%s", got)
	}
	runHermes(t, home, "mcp", "enable", "nope").must(t, 1).oneLineErr(t, "no server named 'nope'")
	runHermes(t, home, "mcp", "disable").must(t, 2)
}
