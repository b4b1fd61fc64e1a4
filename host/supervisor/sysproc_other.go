//go:build !linux

package supervisor

import "syscall"

func pluginSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
