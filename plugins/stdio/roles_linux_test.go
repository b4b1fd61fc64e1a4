package main

import (
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// roleEnv makes this test binary play a part of a server that leaves a
// daemon behind (see playRole); daemonPidEnv names the daemon's pid file.
const (
	roleEnv      = "HERMES_STDIO_TEST_ROLE"
	daemonPidEnv = "HERMES_STDIO_TEST_DAEMON_PID"
	forkPidEnv   = "HERMES_STDIO_TEST_PARENT"
)

// playRole runs the part roleEnv names, if any, and exits:
//
//   - server: starts "fork", waits for it, then reads stdin until it
//     closes (or, with "server-crash", exits with status 9 at once);
//   - fork: starts "daemon" in a session of its own and exits at once, so
//     the daemon is orphaned and leaves the server's process group;
//   - daemon: ignores SIGTERM and SIGHUP, keeps stderr open, writes its
//     pid once its parent is gone, and sleeps until killed.
func playRole() {
	role := os.Getenv(roleEnv)
	if role == "" {
		return
	}
	self, _ := os.Executable()
	run := func(next string, attr *syscall.SysProcAttr) *exec.Cmd {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), roleEnv+"="+next, forkPidEnv+"="+strconv.Itoa(os.Getpid()))
		cmd.Stderr = os.Stderr
		cmd.SysProcAttr = attr
		if err := cmd.Start(); err != nil {
			os.Exit(1)
		}
		return cmd
	}
	switch role {
	case "server", "server-crash":
		_ = run("fork", nil).Wait()
		for !daemonUp() {
			time.Sleep(5 * time.Millisecond)
		}
		if role == "server-crash" {
			os.Exit(9)
		}
		_, _ = io.Copy(io.Discard, os.Stdin)
	case "fork":
		run("daemon", &syscall.SysProcAttr{Setsid: true})
	case "daemon":
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
		// The pid file says the daemon is orphaned: its parent is gone.
		for strconv.Itoa(os.Getppid()) == os.Getenv(forkPidEnv) {
			time.Sleep(time.Millisecond)
		}
		_ = os.WriteFile(os.Getenv(daemonPidEnv)+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o600)
		_ = os.Rename(os.Getenv(daemonPidEnv)+".tmp", os.Getenv(daemonPidEnv))
		select {} // until killed
	}
	os.Exit(0)
}

func daemonUp() bool {
	_, err := os.Stat(os.Getenv(daemonPidEnv))
	return err == nil
}
