package cli_test

import (
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testpty"
)

// TestCancelIsExitOne: on a terminal, Esc in the configure checklist and
// the default answer (Enter) to a removal both cancel, with exit code 1
// and the config untouched.
func TestCancelIsExitOne(t *testing.T) {
	home := newHome(t)
	runHermes(t, home, "mcp", "add", "ts", "--command", testServerPath(t), "--tools", "echo,add").must(t, 0)
	before := readConfig(t, home)

	tm := startTerm(t, home, nil, "mcp", "configure", "ts")
	tm.WaitFor("2/21 selected")
	tm.Press(testpty.KeyEsc)
	if code := tm.Wait(); code != 1 || !strings.Contains(tm.Output(), "Cancelled. No changes made.") {
		t.Fatalf("Esc in configure: exit %d:\n%s", code, tm.Output())
	}

	tm = startTerm(t, home, nil, "mcp", "remove", "ts")
	tm.WaitFor("Remove server 'ts'? [y/N]")
	tm.Press(testpty.KeyEnter)
	if code := tm.Wait(); code != 1 || !strings.Contains(tm.Output(), "Cancelled; 'ts' was kept") {
		t.Fatalf("Enter at the removal prompt: exit %d:\n%s", code, tm.Output())
	}
	if readConfig(t, home) != before {
		t.Fatal("a cancelled command changed config.yaml")
	}
}
