package main

import "syscall"

// childSysProcAttr keeps the server in the plugin's process group (so the
// host kills both with one signal) and has the kernel stop it if the plugin
// dies first.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
