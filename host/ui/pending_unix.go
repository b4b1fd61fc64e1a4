//go:build unix

package ui

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// inputPending reports whether the terminal fd has input to read within
// timeout. It uses select(2), which works on terminals everywhere, and
// poll(2) for descriptors too large for select.
func inputPending(fd int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		left := max(time.Until(deadline), 0)
		var n int
		var err error
		if fd >= 0 && fd < unix.FD_SETSIZE {
			var set unix.FdSet
			set.Set(fd)
			tv := unix.NsecToTimeval(left.Nanoseconds())
			n, err = unix.Select(fd+1, &set, nil, nil, &tv)
		} else {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err = unix.Poll(fds, int(left.Milliseconds()))
		}
		if errors.Is(err, unix.EINTR) && left > 0 {
			continue
		}
		return err == nil && n > 0
	}
}
