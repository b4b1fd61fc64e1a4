//go:build unix

package model

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the helper in a process group of its own: a Ctrl-C on the
// terminal reaches hermes only, which cancels the turn and with it the
// helper (through the call's context). In the terminal's group the helper
// got the SIGINT too and could end the call before hermes's own handler
// saw the signal, so a cancelled turn read as a failed model call.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
