package supervisor

import (
	"math"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// pluginSysProcAttr: own process group (killed as one with its server) and
// SIGTERM when the host dies, which the sdk turns into a clean exit.
func pluginSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// execOpened: the opened plugin binary is executed through /proc/self/fd.
const execOpened = true

var inheritedOnce sync.Once

// keepInherited keeps what the host inherited from its caller (a
// descriptor open in the shell, as in `hermes mcp call ... 7<secret`) from
// every plugin, and so from every server a plugin starts with os/exec:
// Go hands a child every descriptor not marked close-on-exec, and those
// that came through the host's own execve are not. Every descriptor Go
// opens is close-on-exec already, and a plugin's own (ExtraFiles) are
// duplicated for it, so marking all of them above 2, once, changes nothing
// else.
func keepInherited() {
	inheritedOnce.Do(func() { _ = unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) })
}

// streamSocketpair makes the message socket pair, both ends close-on-exec.
func streamSocketpair() ([2]int, error) {
	return syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}
