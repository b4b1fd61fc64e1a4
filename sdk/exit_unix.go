//go:build unix

package sdk

import (
	"fmt"
	"os"
	"syscall"
)

// signalNames are the conventional names of the signals that end processes.
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
	syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
}

// ExitReason describes how a process ended, for error messages: "exited
// with status 3", "was killed by signal SIGSEGV (segmentation fault)",
// "was killed by signal SIGKILL (sent by another process, or by the
// system's out-of-memory killer)". A plugin that runs a server and the host
// describe exits alike with it.
func ExitReason(ps *os.ProcessState) string {
	if ps == nil {
		return "ended"
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return fmt.Sprintf("exited with status %d", ps.ExitCode())
	}
	return "was killed by signal " + signalName(ws.Signal())
}

// WaitReason is ExitReason for a raw wait status, as a process that
// waited for another one reports it (the init of a stdio server's pid
// namespace).
func WaitReason(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "was killed by signal " + signalName(ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", ws.ExitStatus())
}

// signalName names a signal the way a user looks it up ("SIGKILL"), with
// what it usually means.
func signalName(s syscall.Signal) string {
	name, ok := signalNames[s]
	if !ok {
		return fmt.Sprintf("%d (%s)", int(s), s)
	}
	switch s {
	case syscall.SIGKILL:
		return name + " (sent by another process, or by the system's out-of-memory killer)"
	case syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP:
		return name + " (asked to stop by another process)"
	}
	return name + " (" + s.String() + ")"
}
