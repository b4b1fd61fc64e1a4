package main

import "syscall"

// sysProcAttr puts the command in a process group of its own, and has the
// kernel kill it if the plugin dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the process group the command leads.
func killGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }
