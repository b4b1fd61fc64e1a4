package supervisor

import "syscall"

// pluginSysProcAttr: own process group (killed as one with its server) and
// SIGTERM when the host dies, which the sdk turns into a clean exit.
func pluginSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// execOpened: the opened plugin binary is executed through /proc/self/fd.
const execOpened = true
