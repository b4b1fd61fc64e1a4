//go:build !linux

package supervisor

import "syscall"

func pluginSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// execOpened: without /proc the binary is executed by its path.
const execOpened = false

// keepInherited does nothing here: without close_range, what the host
// inherited from its caller reaches its plugins.
func keepInherited() {}

// streamSocketpair makes the message socket pair, both ends close-on-exec.
// Without SOCK_CLOEXEC the flag is set under ForkLock, so no child started
// in between inherits an end.
func streamSocketpair() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fds, err
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return fds, nil
}
