//go:build unix

package servecmd

import (
	"os"

	"golang.org/x/sys/unix"
)

// DivertStdout gives the protocol a duplicate of stdout and points file
// descriptor 1 at stderr.
func DivertStdout() (*os.File, func(), error) {
	fd, err := unix.Dup(1)
	if err != nil {
		return nil, nil, err
	}
	unix.CloseOnExec(fd)
	if err := unix.Dup2(2, 1); err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	private := os.NewFile(uintptr(fd), "protocol-stdout")
	return private, func() {
		_ = unix.Dup2(fd, 1)
		private.Close()
	}, nil
}
