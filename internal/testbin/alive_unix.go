//go:build unix

package testbin

import (
	"errors"
	"syscall"
)

// alive reports whether a process with this id exists (EPERM: it does, and
// is someone else's).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
