//go:build unix

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/cli"
	"github.com/hermes-agent/hermes/internal/testpty"
)

// A person who cancels one of an install's questions on the terminal
// (ctrl-c at the hidden value, ESC in the tool checklist) declines the
// install: it says so and nothing is installed.
func TestInstallCancelledOnTerminal(t *testing.T) {
	t.Parallel()
	url, sha := demoServerRepo(t)
	cat := catalogDir(t, map[string]string{"demo": demoEntry(url, sha, "${INSTALL_DIR}/bin/run.sh")})
	for _, tc := range []struct {
		name string
		// cancel answers the questions up to the one it cancels.
		cancel func(tm *testpty.Term)
	}{
		{"secret", func(tm *testpty.Term) {
			tm.WaitFor("Demo token: ")
			tm.Press(testpty.KeyCtrlC)
		}},
		{"tools", func(tm *testpty.Term) {
			tm.WaitFor("Demo token: ")
			tm.Press("tok\r")
			tm.WaitFor("Region [eu]: ")
			tm.Press("\r")
			tm.WaitFor("Tools to enable for 'demo'")
			tm.Press(testpty.KeyEsc)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home := newHome(t)
			tm, _ := startHermesTerm(t, home, []string{"HERMES_OPTIONAL_MCPS=" + cat}, "mcp", "install", "demo")
			tm.WaitFor("Install 'demo'? [y/N] ")
			tm.Press("y\r")
			tc.cancel(tm)
			if code := tm.Wait(); code != cli.ExitFail {
				t.Fatalf("exit %d, want %d; output:\n%s", code, cli.ExitFail, tm.Output())
			}
			if out := tm.Output(); !strings.Contains(out, "Cancelled; nothing was installed") {
				t.Errorf("output lacks the cancellation:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(home, "mcp-installs", "demo")); !os.IsNotExist(err) {
				t.Errorf("install folder: %v, want none", err)
			}
			if s := loadConfig(t, home).Server("demo"); s != nil {
				t.Errorf("entry saved: %+v", s)
			}
		})
	}
}
