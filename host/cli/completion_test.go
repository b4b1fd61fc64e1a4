package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompletion: `hermes completion` is in the help and prints each
// shell's script; TAB completes server names for the commands that take
// one, catalog names for install, and the server's tools after
// `hermes mcp call NAME`.
func TestCompletion(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  alpha:\n    command: "+testServerPath(t)+"\n    args: [--tools, \"2\"]\n  beta:\n    url: http://127.0.0.1:1/mcp\n")
	if help := runHermes(t, home, "--help").must(t, 0).stdout; !strings.Contains(help, "completion") {
		t.Errorf("hermes --help does not list completion:\n%s", help)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		if out := runHermes(t, home, "completion", shell).must(t, 0).stdout; !strings.Contains(out, "hermes") || len(out) < 200 {
			t.Errorf("completion %s printed %q", shell, out)
		}
	}
	for _, cmd := range []string{"test", "call", "remove", "configure", "enable", "disable", "login", "logout", "reauth", "uninstall", "logs"} {
		out := runHermes(t, home, "mcp", cmd, "--generate-shell-completion").must(t, 0).stdout
		if out != "alpha\nbeta\n" {
			t.Errorf("hermes mcp %s <TAB> = %q, want the two server names", cmd, out)
		}
	}
	if out := runHermes(t, home, "mcp", "install", "--generate-shell-completion").must(t, 0).stdout; !strings.Contains(out, "\nfilesystem\n") {
		t.Errorf("hermes mcp install <TAB> = %q, want the catalog", out)
	}
	// A bound no machine reaches: a loaded one still lists the tools (the
	// bound itself is TestCompletionServerBound's).
	out := runHermesEnv(t, home, []string{"HERMES_COMPLETION_TIMEOUT=10m"}, "mcp", "call", "alpha", "--generate-shell-completion").must(t, 0).stdout
	if !strings.Contains(out, "\necho\n") || !strings.Contains(out, "\ntool_2\n") {
		t.Errorf("hermes mcp call alpha <TAB> = %q, want its tools", out)
	}
	// A name argument is complete: nothing more is offered.
	if out := runHermes(t, home, "mcp", "test", "alpha", "--generate-shell-completion").must(t, 0).stdout; out != "" {
		t.Errorf("hermes mcp test alpha <TAB> = %q", out)
	}
}

// TestCompletionServerBound: `hermes mcp call NAME <TAB>` starts server
// NAME only within its bound: HERMES_COMPLETION_TIMEOUT=0 starts nothing
// at all, and a server that never answers (and ignores SIGTERM and the end
// of its input) leaves the TAB with nothing offered once the bound is over,
// instead of hanging the shell.
func TestCompletionServerBound(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	marker := filepath.Join(t.TempDir(), "started")
	writeConfig(t, home, "mcp_servers:\n"+
		"  marks:\n    command: touch\n    args: ["+marker+"]\n"+
		"  hangs:\n    command: "+testServerPath(t)+"\n    args: [--hang-initialize, --ignore-sigterm, --linger]\n")
	out := runHermesEnv(t, home, []string{"HERMES_COMPLETION_TIMEOUT=0"}, "mcp", "call", "marks", "--generate-shell-completion").must(t, 0).stdout
	if out != "" {
		t.Errorf("hermes mcp call marks <TAB> = %q, want nothing", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("HERMES_COMPLETION_TIMEOUT=0: a TAB started the server")
	}
	// A bound starts it (so the check above can fail); one no machine
	// reaches, so that a loaded one starts the plugin and the server in
	// it (the server exits at once: the TAB does not wait the bound out).
	runHermesEnv(t, home, []string{"HERMES_COMPLETION_TIMEOUT=10m"}, "mcp", "call", "marks", "--generate-shell-completion").must(t, 0)
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("a bound of 10m did not start the server: %v", err)
	}
	if out := runHermesEnv(t, home, []string{"HERMES_COMPLETION_TIMEOUT=500ms"}, "mcp", "call", "hangs", "--generate-shell-completion").must(t, 0).stdout; out != "" {
		t.Errorf("hermes mcp call hangs <TAB> = %q, want nothing", out)
	}
}
