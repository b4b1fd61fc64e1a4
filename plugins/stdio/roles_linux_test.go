package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// roleEnv makes this test binary play a part of a server that leaves a
// daemon behind (see playRole); daemonPidEnv names the FIFO the daemon's
// pid is written to.
const (
	roleEnv      = "HERMES_STDIO_TEST_ROLE"
	daemonPidEnv = "HERMES_STDIO_TEST_DAEMON_PID"
)

// playRole runs the part roleEnv names, if any, and exits:
//
//   - server: starts "fork" and waits for it, so the daemon is orphaned
//     by then; writes the daemon's pid (which fork printed) to the FIFO;
//     then reads stdin until it closes (or, with "server-crash", exits
//     with status 9 once it has read a line, so the test can find the
//     daemon first);
//   - fork: starts "daemon" in a session of its own, waits until it is
//     ready (it closes the pipe given as its fd 3), prints its pid and
//     exits, so the daemon leaves the server's process group and its
//     parent;
//   - daemon: ignores SIGTERM and SIGHUP, keeps stderr open, says it is
//     ready, and sleeps until killed.
//
// Each step waits for a signal from the one before (a process's exit, a
// pipe's end), never for time to pass.
func playRole() {
	role := os.Getenv(roleEnv)
	if role == "" {
		return
	}
	self, _ := os.Executable()
	child := func(next string) *exec.Cmd {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), roleEnv+"="+next)
		cmd.Stderr = os.Stderr
		return cmd
	}
	switch role {
	case "server", "server-crash":
		out, err := child("fork").Output()
		if err != nil {
			os.Exit(1)
		}
		// The FIFO's open waits for the test to read it.
		f, err := os.OpenFile(os.Getenv(daemonPidEnv), os.O_WRONLY, 0)
		if err != nil {
			os.Exit(1)
		}
		_, _ = f.WriteString(strings.TrimSpace(string(out)))
		_ = f.Close()
		if role == "server-crash" {
			var b [1]byte
			_, _ = os.Stdin.Read(b[:])
			os.Exit(9)
		}
		_, _ = io.Copy(io.Discard, os.Stdin)
	case "fork":
		r, w, err := os.Pipe()
		if err != nil {
			os.Exit(1)
		}
		cmd := child("daemon")
		cmd.ExtraFiles = []*os.File{w}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			os.Exit(1)
		}
		_ = w.Close()
		_, _ = io.Copy(io.Discard, r) // EOF once the daemon closed fd 3
		fmt.Print(cmd.Process.Pid)
	case "daemon":
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
		_ = os.NewFile(3, "ready").Close()
		select {} // until killed
	}
	os.Exit(0)
}

// daemonPid reads the daemon's pid from the FIFO at path; it blocks until
// a server writes it.
func daemonPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(b))
}
