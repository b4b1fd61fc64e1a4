//go:build unix

package cli_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testpty"
)

// On a terminal, hermes's own flags after --args are asked about: the
// default (Enter) saves nothing and says how to write it; "y" keeps them as
// the server's arguments. They were saved without a question.
func TestAddArgsAsksAboutHermesFlagsOnTerminal(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	start := func(name string) *testpty.Term {
		cmd := exec.Command(testbin.Path(t, "hermes"), "mcp", "add", name, "--command", "node", "--no-probe", "--args", "server.js", "--yes")
		cmd.Env = hermesTestEnv(t, home)
		tm := testpty.Start(t, cmd, 30, 160)
		tm.WaitFor("--yes after --args would be saved as the server's own arguments")
		tm.WaitFor("Are they the server's arguments? [y/N] ")
		return tm
	}
	tm := start("refused")
	tm.Press("\r")
	if code := tm.Wait(); code != 2 {
		t.Fatalf("Enter: exit %d, want 2; output:\n%s", code, tm.Output())
	}
	if out := tm.Output(); !strings.Contains(out, "nothing was saved") || !strings.Contains(out, "-- CMD ARGS...") {
		t.Errorf("Enter: output:\n%s", out)
	}
	tm = start("kept")
	tm.Press("y\r")
	if code := tm.Wait(); code != 0 {
		t.Fatalf("y: exit %d; output:\n%s", code, tm.Output())
	}
	got := readConfig(t, home)
	if strings.Contains(got, "refused:") || !strings.Contains(got, "kept:\n    command: node\n    args:\n      - server.js\n      - --yes\n") {
		t.Errorf("config.yaml:\n%s", got)
	}
}
