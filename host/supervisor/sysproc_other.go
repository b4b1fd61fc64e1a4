//go:build !linux

package supervisor

import "syscall"

func pluginSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// execOpened: without /proc the binary is executed by its path.
const execOpened = false

// keepInherited does nothing here: without close_range, what the host
// inherited from its caller reaches its plugins.
func keepInherited() {}
