package cli_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testpty"
)

// TestCancelIsExitOne: on a terminal, Esc in the configure checklist and
// the default answer (Enter) to a removal both cancel, with exit code 1
// and the config untouched.
func TestCancelIsExitOne(t *testing.T) {
	t.Parallel()
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

// TestNarrowTerminal: on a 60-column terminal nothing hermes prints is
// wider than the terminal except a single word that is, and no word is
// cut: tables cut their flexible column, messages break between words.
func TestNarrowTerminal(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  everything:\n    command: sh\n    args: [\"/opt/some/very/long/installation/folder/of/the/server/dist/index.js\", stdio]\n"+
		"  web:\n    url: https://very-long-host-name.example.com/some/very/long/path/to/the/mcp/endpoint\n"+
		"    headers:\n      Authorization: \"Bearer ${NARROW_TEST_TOKEN}\"\n")
	for _, args := range [][]string{{"mcp", "list"}, {"mcp", "test", "web"}, {"mcp", "catalog"}} {
		cmd := exec.Command(testbin.Path(t, "hermes"), args...)
		cmd.Env = hermesTestEnv(t, home)
		tm := testpty.Start(t, cmd, 40, 60)
		tm.Wait()
		out := strings.ReplaceAll(tm.Output(), "\r\n", "\n")
		for _, l := range strings.Split(out, "\n") {
			l = strings.TrimRight(l, " \r")
			if w := len([]rune(stripStyle(l))); w > 60 && strings.Contains(strings.TrimSpace(l), " ") {
				t.Errorf("hermes %s: a line of %d columns:\n%q", strings.Join(args, " "), w, l)
			}
		}
		if args[1] == "test" && !strings.Contains(strings.Join(strings.Fields(out), " "), "add NARROW_TEST_TOKEN=... to") {
			t.Errorf("hermes mcp test web: the fix was cut:\n%s", out)
		}
	}
}

// stripStyle removes the colour escape sequences of a terminal line.
func stripStyle(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
