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
// sleeps until it is killed. startDaemon returns only once the pid file is
// written, so a caller that stops the server at once still finds it.
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
	// The daemon closes its end of this pipe once its pid file is written;
	// the intermediate waits for that before it exits.
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cmd := exec.Command(self, "--daemon-run", pidFile)
	cmd.Env = os.Environ()
	cmd.Stderr = os.Stderr
	cmd.ExtraFiles = []*os.File{w} // fd 3 in the daemon
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	w.Close()
	var b [1]byte
	_, _ = r.Read(b[:]) // EOF once the daemon closed fd 3
	return 0
}

// daemonRun is the daemon itself.
func daemonRun(pidFile string) int {
	signal.Ignore(syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if ready := os.NewFile(3, "ready"); ready != nil {
		ready.Close()
	}
	for {
		time.Sleep(time.Hour)
	}
}
