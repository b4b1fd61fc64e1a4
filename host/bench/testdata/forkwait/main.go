// Command forkwait is the floor of BenchmarkLauncherRSS: the smallest Go
// program that does what the stdio plugin's launcher does while it waits
// as an init, starting a child (its arguments) and waiting for it, with
// nothing else linked. It exits with the child.
package main

import (
	"os"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		os.Exit(2)
	}
	pid, err := syscall.ForkExec(os.Args[1], os.Args[1:], &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		os.Exit(126)
	}
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
	os.Exit(ws.ExitStatus())
}
