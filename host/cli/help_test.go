package cli_test

import (
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
)

// A server named h or help is a server: 'hermes mcp test h' tests it instead
// of printing help, and the other commands that take a server name treat
// it as one too.
func TestServerNamedHelp(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"h", "help"} {
		t.Run(name, func(t *testing.T) {
			home := newHome(t)
			r := runHermes(t, home, "mcp", "add", name, "--command", testbin.Path(t, "hermes-testserver"), "--yes").must(t, 0)
			if !strings.Contains(r.stdout, "Saved '"+name+"'") {
				t.Fatalf("mcp add %s:\n%s", name, r.stdout)
			}
			r = runHermes(t, home, "mcp", "test", name).must(t, 0)
			if !strings.Contains(r.stdout, "Testing '"+name+"'") || strings.Contains(r.stdout, "USAGE") {
				t.Fatalf("mcp test %s:\n%s", name, r.stdout)
			}
			r = runHermes(t, home, "mcp", "call", name, "echo", "--arg", "message=hi").must(t, 0)
			if r.stdout != "hi\n" {
				t.Fatalf("mcp call %s: %q", name, r.stdout)
			}
			runHermes(t, home, "mcp", "disable", name).must(t, 0)
			runHermes(t, home, "mcp", "enable", name).must(t, 0)
			runHermes(t, home, "mcp", "configure", name, "--include", "echo").must(t, 0)
			r = runHermes(t, home, "mcp", "remove", name, "--yes").must(t, 0)
			if !strings.Contains(r.stdout, "Removed '"+name+"'") {
				t.Fatalf("mcp remove %s:\n%s", name, r.stdout)
			}
			// Help is still there when asked for.
			r = runHermes(t, home, "mcp", "test", "--help").must(t, 0)
			if !strings.Contains(r.stdout, "USAGE") {
				t.Errorf("mcp test --help:\n%s", r.stdout)
			}
			r = runHermes(t, home, "mcp", "help", "test").must(t, 0)
			if !strings.Contains(r.stdout, "hermes mcp test") {
				t.Errorf("mcp help test:\n%s", r.stdout)
			}
		})
	}
}
