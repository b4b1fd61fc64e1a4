//go:build unix

package testserver

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// startDaemon leaves a daemon behind the way careless servers do: the
// server starts a child (--daemon-fork), which starts the daemon in a
// session of its own (setsid) and exits at once, so the daemon is orphaned
// and leaves the server's process group. The daemon writes its pid to
// pidFile, keeps the server's stderr open, ignores SIGTERM and SIGHUP, and
// sleeps until it is killed.
func startDaemon(pidFile string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "--daemon-fork", pidFile)
	cmd.Env = os.Environ()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the daemon's parent: %w", err)
	}
	// The intermediate exits as soon as the daemon started; reap it.
	return cmd.Wait()
}

// daemonFork is the intermediate process of startDaemon.
func daemonFork(pidFile string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cmd := exec.Command(self, "--daemon-run", pidFile)
	cmd.Env = os.Environ()
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// daemonRun is the daemon itself.
func daemonRun(pidFile string) int {
	signal.Ignore(syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for {
		time.Sleep(time.Hour)
	}
}
