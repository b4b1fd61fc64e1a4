//go:build unix

package cli_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testpty"
)

// On a terminal, import offers the servers found in a checklist, shows
// what it will add, asks once, then runs each through the add flow: the
// tool checklist comes pre-checked from the client's own filter
// (includeTools) and what the person picks is saved.
func TestImportInteractive(t *testing.T) {
	t.Parallel()
	w := newImportWorld(t)
	srv := testServerPath(t)
	put(t, w.user, ".gemini/settings.json", `{"mcpServers": {
  "good": {"command": "`+srv+`", "includeTools": ["echo", "add"]},
  "other": {"command": "`+srv+`"}
}}`)
	cmd := exec.Command(testbin.Path(t, "hermes"), "mcp", "import")
	cmd.Env = hermesTestEnv(t, w.home, "HOME="+w.user, "CODEX_HOME=")
	cmd.Dir = w.project
	tm := testpty.Start(t, cmd, 40, 120)
	tm.WaitFor("Servers to import")
	tm.WaitFor("2/2 selected")
	tm.Press(testpty.KeyDown, " ")
	tm.WaitFor("1/2 selected")
	tm.Press(testpty.KeyEnter)
	tm.WaitFor("Import 1 server(s)? [Y/n] ")
	tm.Press("\r")
	tm.WaitFor("Tools to enable for 'good'")
	tm.WaitFor("2/21 selected")
	tm.Press(" ") // the first tool, add: unchecked
	tm.WaitFor("1/21 selected")
	tm.Press(testpty.KeyEnter)
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.Output())
	}
	out := tm.Output()
	if !strings.Contains(out, "+ good from ") || strings.Contains(out, "+ other from ") || !strings.Contains(out, "(1/21 tools enabled)") {
		t.Errorf("output:\n%s", out)
	}
	s := loadConfig(t, w.home).Server("good")
	if s == nil || !slices.Equal(s.Tools.Include, []string{"echo"}) || loadConfig(t, w.home).Server("other") != nil {
		t.Errorf("config.yaml:\n%s", readConfig(t, w.home))
	}
}
