//go:build unix

package testpty

import (
	"bufio"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

func TestOpenEchoesAndDeliversKeys(t *testing.T) {
	tm := Open(t, 24, 80)
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(tm.TTY()).ReadString('\n')
		lines <- line
	}()
	_, _ = tm.TTY().WriteString("Name: ")
	tm.WaitFor("Name: ")
	tm.Press("a", "b", KeyEnter)
	if got := <-lines; got != "ab\n" {
		t.Errorf("read %q, want %q", got, "ab\n")
	}
	tm.WaitFor("ab") // echoed by the terminal
}

func TestStartWaitsForExitCode(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	tm := Start(t, exec.Command(sh, "-c", `printf 'ready? '; read x; echo "got <$x>"; exit 3`), 24, 80)
	tm.WaitFor("ready? ")
	tm.Press("yes", KeyEnter)
	if code := tm.Wait(); code != 3 {
		t.Errorf("exit code %d, want 3", code)
	}
	if out := tm.Output(); !strings.Contains(out, "got <yes>") {
		t.Errorf("output %q", out)
	}
}

// recorder stands in for a test, recording a failure instead of ending it.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Fatalf(f string, args ...any) { r.failed = fmt.Sprintf(f, args...) }

func TestLoneEscMustBeLast(t *testing.T) {
	tm := Open(t, 24, 80)
	r := &recorder{TB: t}
	tm.t = r
	tm.Press(KeyEsc, "x")
	if !strings.Contains(r.failed, "lone ESC") {
		t.Errorf("Press(ESC, x) did not fail: %q", r.failed)
	}
	r.failed = ""
	tm.Press(KeyDown, "x", KeyEsc)
	if r.failed != "" {
		t.Errorf("Press(down, x, ESC) failed: %s", r.failed)
	}
}
