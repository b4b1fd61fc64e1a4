//go:build unix

package cli_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testpty"
)

// plainEntry is a catalog entry installed from url at sha that asks for
// nothing and names no default tools, so its checklist starts with every
// tool checked.
func plainEntry(url, sha string) string {
	return `manifest_version: 1
name: plain
description: A plain server.
transport:
  type: stdio
  command: ${INSTALL_DIR}/run.sh
install:
  type: git
  url: ` + url + `
  ref: ` + sha + `
`
}

// Bare hermes mcp on a terminal is the picker: it lists the catalog's
// entries and the custom servers with their status, installs an entry
// picked from it (the whole install flow, checklist pre-checked with the
// manifest's default), disables it, installs another whose checklist
// starts with every tool, and quits on Enter. config.yaml says so.
func TestPickerOnTerminal(t *testing.T) {
	t.Parallel()
	url, sha := demoServerRepo(t)
	cat := catalogDir(t, map[string]string{
		"demo":  demoEntry(url, sha, "${INSTALL_DIR}/bin/run.sh"),
		"plain": plainEntry(url, sha),
	})
	home := newHome(t)
	writeConfig(t, home, "# mine\nmcp_servers:\n  mine:\n    command: my-own-server\n")
	extra := []string{"HERMES_OPTIONAL_MCPS=" + cat}

	tm, _ := startHermesTerm(t, home, extra, "mcp")
	tm.WaitFor("Server number or name (Enter to quit):")
	list := tm.Output()
	for _, want := range []string{"MCP servers: the catalog and your config", "A demo server.", "A plain server.", "custom — enabled", "my-own-server"} {
		if !strings.Contains(list, want) {
			t.Errorf("the picker's list lacks %q:\n%s", want, list)
		}
	}
	if strings.Count(list, "available") != 2 {
		t.Errorf("want demo and plain available:\n%s", list)
	}

	// Install demo.
	tm.Press("demo\r")
	tm.WaitFor("'demo' (available): A demo server.")
	tm.WaitFor("1  install")
	tm.Press("1\r")
	tm.WaitFor("Install 'demo'? [y/N] ")
	if !strings.Contains(tm.Output(), "Launch: "+filepath.Join(home, "mcp-installs", "demo", "bin", "run.sh")) {
		t.Errorf("the plan was not shown before the question:\n%s", tm.Output())
	}
	tm.Press("y\r")
	tm.WaitFor("Demo token: ")
	tm.Press("picked-secret-7\r")
	tm.WaitFor("Region [eu]: ")
	tm.Press("\r")
	tm.WaitFor("Tools to enable for 'demo'")
	tm.WaitFor("3/21 selected")
	tm.Press(testpty.KeyEnter)
	tm.WaitFor("✓ Installed 'demo' (enabled).")

	// Back in the list: demo is enabled now; disable it.
	tm.Press("demo\r")
	tm.WaitFor("'demo' (enabled): A demo server.")
	tm.WaitFor("2  disable")
	tm.Press("disable\r")
	tm.WaitFor("✓ Disabled 'demo'.")

	// Install plain: no default tools, so every tool starts checked.
	tm.Press("plain\r")
	tm.WaitFor("'plain' (available): A plain server.")
	tm.Press("1\r")
	tm.WaitFor("Install 'plain'? [y/N] ")
	tm.Press("y\r")
	tm.WaitFor("Tools to enable for 'plain'")
	tm.WaitFor("21/21 selected")
	tm.Press(testpty.KeyEnter)
	tm.WaitFor("✓ Installed 'plain' (enabled).")
	tm.Press("\r")
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.Output())
	}
	out := tm.Output()
	if strings.Contains(out, "picked-secret-7") {
		t.Error("the secret was echoed")
	}
	if !strings.Contains(out, "installed (disabled)") {
		t.Errorf("the list never showed demo disabled:\n%s", out)
	}

	cfg := loadConfig(t, home)
	demo, plain, mine := cfg.Server("demo"), cfg.Server("plain"), cfg.Server("mine")
	if demo == nil || demo.Err != nil || demo.Enabled || !slices.Equal(demo.Tools.Include, []string{"add", "echo", "env"}) {
		t.Errorf("demo = %+v", demo)
	}
	if plain == nil || plain.Err != nil || !plain.Enabled || plain.Tools.Include != nil || plain.Tools.Exclude != nil {
		t.Errorf("plain = %+v", plain)
	}
	if mine == nil || !mine.Enabled || mine.Command != "my-own-server" {
		t.Errorf("the custom server changed: %+v", mine)
	}
	if !strings.HasPrefix(readConfig(t, home), "# mine\n") {
		t.Errorf("config.yaml lost its comment:\n%s", readConfig(t, home))
	}
}

// Without a terminal, bare hermes mcp asks nothing and prints the catalog
// exactly as hermes mcp catalog does.
func TestPickerWithoutTerminal(t *testing.T) {
	t.Parallel()
	url, sha := demoServerRepo(t)
	cat := catalogDir(t, map[string]string{
		"demo":  demoEntry(url, sha, "${INSTALL_DIR}/bin/run.sh"),
		"plain": plainEntry(url, sha),
	})
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  plain:\n    command: x\n    enabled: false\n    catalog: plain\n  mine:\n    url: https://example.com/mcp\n")
	before := installTree(t, home)
	extra := []string{"HERMES_OPTIONAL_MCPS=" + cat}

	r := runHermesEnv(t, home, extra, "mcp").must(t, 0)
	for _, want := range []string{"demo", "available", "A demo server.", "plain", "installed (disabled)", "mine", "custom — enabled", "https://example.com/mcp", "Install: hermes mcp install <name>"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("hermes mcp lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "Server number or name") {
		t.Errorf("hermes mcp asked without a terminal:\n%s", r.stdout)
	}
	c := runHermesEnv(t, home, extra, "mcp", "catalog").must(t, 0)
	if r.stdout != c.stdout || r.stderr != c.stderr {
		t.Errorf("hermes mcp and hermes mcp catalog differ:\n%s\n%s\n---\n%s\n%s", r.stdout, r.stderr, c.stdout, c.stderr)
	}
	if after := installTree(t, home); after != before {
		t.Errorf("hermes mcp changed the home:\n%s", after)
	}

	// Built in: the shipped catalog is listed.
	r = runHermesEnv(t, newHome(t), nil, "mcp").must(t, 0)
	for _, want := range []string{"filesystem", "everything", "available"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("hermes mcp with the built-in catalog lacks %q:\n%s", want, r.stdout)
		}
	}
}
