//go:build unix && !linux

package serve

import (
	"os"
	"syscall"
)

// killOwnGroup kills the plugin's process group, and so every server process
// it started, when the plugin leads its own group (the host starts it so).
// Without a list of the group's members this takes the plugin too: it ends
// by SIGKILL, not with status 0 (see group_linux.go).
func killOwnGroup() {
	pid := os.Getpid()
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
