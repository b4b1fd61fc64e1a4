//go:build unix

package sdk

import (
	"os/exec"
	"strings"
	"testing"
)

// An exit reads as a status or as a named signal, never "killed by killed".
func TestExitReason(t *testing.T) {
	for script, want := range map[string]string{
		"exit 3":        "exited with status 3",
		"kill -KILL $$": "was killed by signal SIGKILL (sent by another process, or by the system's out-of-memory killer)",
		"kill -SEGV $$": "was killed by signal SIGSEGV (segmentation fault)",
		"kill -TERM $$": "was killed by signal SIGTERM (asked to stop by another process)",
		"exit 0":        "exited with status 0",
		"kill -USR1 $$": "was killed by signal SIGUSR1 (user defined signal 1)",
	} {
		cmd := exec.Command("sh", "-c", script)
		_ = cmd.Run()
		if got := ExitReason(cmd.ProcessState); got != want || strings.Contains(got, "killed by killed") {
			t.Errorf("%s: %q, want %q", script, got, want)
		}
	}
	if got := ExitReason(nil); got != "ended" {
		t.Errorf("nil: %q", got)
	}
}
