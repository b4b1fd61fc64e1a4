//go:build !linux

package install

import "syscall"

// installSysProcAttr: the command gets its own process group, killed as
// one.
func installSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// procStart is unknown without /proc.
func procStart(pid int) uint64 { return 0 }

// killProc: without /proc a group cannot be told from a later one of the
// same number, so what an install that died left running is not killed
// (the command's Pdeathsig is Linux-only too).
func killProc(p *journalProc) {}
