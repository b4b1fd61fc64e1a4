package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// add-json takes a server in the other clients' JSON shape, moves a
// secret env value to .env, probes it through the add flow and saves it;
// the secret is printed nowhere.
func TestAddJSONStdioMovesSecret(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	srv := testServerPath(t)
	r := runHermes(t, home, "mcp", "add-json", "ts", `{"type":"stdio","command":"`+srv+`","args":["--tools","1"],"env":{"SERVICE_TOKEN":"tok-AddJson-S3cret","LOG_LEVEL":"debug"}}`, "--yes").must(t, 0)
	if !strings.Contains(r.stdout, "✓ Secret of env SERVICE_TOKEN saved to "+filepath.Join(home, ".env")+" as MCP_TS_SERVICE_TOKEN") || !strings.Contains(r.stdout, "✓ Saved 'ts'") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	want := "mcp_servers:\n  ts:\n    command: " + srv + "\n    args:\n      - --tools\n      - \"1\"\n    env:\n      SERVICE_TOKEN: ${MCP_TS_SERVICE_TOKEN}\n      LOG_LEVEL: debug\n"
	if got := readConfig(t, home); got != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}
	b, _ := os.ReadFile(filepath.Join(home, ".env"))
	if !strings.Contains(string(b), "MCP_TS_SERVICE_TOKEN=tok-AddJson-S3cret") {
		t.Errorf(".env lacks the secret")
	}
	noLeak(t, []string{"AddJson-S3cret"}, r)
	// An existing name is refused without --yes, as with add.
	runHermes(t, home, "mcp", "add-json", "ts", `{"command":"`+srv+`"}`, "--no-probe").must(t, 1).oneLineErr(t, "already exists", "--yes")
}

// The JSON may come on stdin; --no-probe saves without connecting; an
// HTTP entry keeps the Authorization scheme in config.yaml and the token
// in .env.
func TestAddJSONFromStdin(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	in := strings.NewReader(`{"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer tok-Stdin-S3cret"}}`)
	r := runHermesInput(t, home, nil, in, "mcp", "add-json", "remote", "-", "--no-probe").must(t, 0)
	want := "mcp_servers:\n  remote:\n    url: https://mcp.example.com/mcp\n    headers:\n      Authorization: Bearer ${MCP_REMOTE_AUTHORIZATION}\n"
	if got := readConfig(t, home); got != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}
	noLeak(t, []string{"Stdin-S3cret"}, r)
}

// Bad input is a usage error in one line that says what to do, and
// nothing is written.
func TestAddJSONErrors(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"x", `{"command": "a",`}, []string{"invalid server JSON for 'x'"}},
		{[]string{"x", `{"mcpServers": {"a": {"command": "b"}}}`}, []string{"whole config file", "hermes mcp import --from FILE"}},
		{[]string{"x", `{"type": "ws", "url": "wss://h/"}`}, []string{"cannot add 'x'", `type "ws"`}},
		{[]string{"x", `{"args": ["a"]}`}, []string{"neither a command nor a url"}},
		{[]string{"bad name", `{"command": "a"}`}, []string{"invalid server name"}},
		{[]string{"x"}, []string{"no JSON given"}},
	} {
		runHermes(t, home, append([]string{"mcp", "add-json"}, c.args...)...).must(t, 2).oneLineErr(t, c.want...)
	}
	if c := readConfig(t, home); c != "" {
		t.Errorf("config.yaml written:\n%s", c)
	}
}

// The editors' ${userHome} is the HOME of the run's environment
// (cli.Options.Env), not the process's.
func TestAddJSONUserHomeIsTheRunsHome(t *testing.T) {
	t.Parallel()
	home, user := newHome(t), t.TempDir()
	runHermesEnv(t, home, []string{"HOME=" + user}, "mcp", "add-json", "ts", `{"command":"${userHome}/bin/srv","args":["${userHome}/data"]}`, "--no-probe").must(t, 0)
	want := "mcp_servers:\n  ts:\n    command: " + user + "/bin/srv\n    args:\n      - " + user + "/data\n"
	if got := readConfig(t, home); got != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}
}
