//go:build unix

package serve

import (
	"os"
	"syscall"
)

// killOwnGroup kills the plugin's process group, and so every server process
// it started, when the plugin leads its own group (the host starts it so).
func killOwnGroup() {
	pid := os.Getpid()
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
