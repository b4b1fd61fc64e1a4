package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// A server that double-forks a setsid daemon leaves nothing behind,
// whether it is stopped or exits on its own: in a pid namespace of its own
// the daemon is handed to the namespace's init (the launcher) and killed by
// the kernel when the server ends; without one (the fallback) the plugin, a
// child subreaper, adopts the daemon and kills it.
func TestNoDescendantSurvives(t *testing.T) {
	for _, pidns := range []bool{true, false} {
		name := "pidns"
		if !pidns {
			name = "subreaper"
		}
		t.Run(name, func(t *testing.T) { testNoDescendantSurvives(t, pidns) })
	}
}

func testNoDescendantSurvives(t *testing.T, pidns bool) {
	sandboxOptions = sandbox.Options{NoPidNS: !pidns}
	t.Cleanup(func() { sandboxOptions = sandbox.Options{} })
	if err := becomeSubreaper(); err != nil {
		t.Skipf("no child subreaper here: %v", err)
	}
	t.Cleanup(func() { _, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"server", "server-crash"} {
		t.Run(role, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "daemon.pid")
			if err := syscall.Mkfifo(pidFile, 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := transport.Config{Server: "s", Command: self,
				Env: []string{roleEnv + "=" + role, daemonPidEnv + "=" + pidFile}}
			c, err := start(context.Background(), cfg, &fakeHost{}, hclog.NewNullLogger())
			if err != nil {
				t.Fatal(err)
			}
			nsPid := waitPid(t, pidFile)
			daemon := hostPid(nsPid, daemonPidEnv+"="+pidFile)
			if daemon == 0 {
				t.Fatalf("no daemon with pid %d in its pid namespace is running", nsPid)
			}
			t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGKILL) })
			if role == "server" {
				want, who := os.Getpid(), "the plugin (its subreaper)"
				if pidns {
					want, who = c.cmd.Process.Pid, "the launcher (the init of its pid namespace)"
				}
				if ppid := parentOf(daemon); ppid != want {
					t.Fatalf("daemon %d has parent %d (%s), want %s %d; server %d", daemon, ppid, procState(ppid), who, want, c.cmd.Process.Pid)
				}
				_ = c.Close()
			} else {
				if err := c.Write(context.Background(), []byte("crash")); err != nil {
					t.Fatal(err)
				}
				_, err := c.Read(context.Background())
				if !strings.Contains(err.Error(), "exited with status 9") {
					t.Fatalf("end = %v", err)
				}
			}
			<-c.exited
			if _, err := os.Stat("/proc/" + strconv.Itoa(daemon)); err == nil {
				t.Fatalf("daemon %d survived its server (%s)", daemon, procState(daemon))
			}
		})
	}
}

// A server killed by a signal is reported with its pid and the signal's
// name, not "killed by killed".
func TestKilledBySignal(t *testing.T) {
	c, _ := sh(t, `kill -KILL $$`, 0)
	_, err := c.Read(context.Background())
	msg := err.Error()
	if sdk.ErrorCode(err) != sdk.CodeClosed || !strings.Contains(msg, "pid "+strconv.Itoa(c.pid)+")") ||
		!strings.Contains(msg, "was killed by signal SIGKILL") || strings.Contains(msg, "killed by killed") {
		t.Fatalf("exit reason = %q", msg)
	}
}

// waitPid reads the daemon's pid from the FIFO at file: the server writes
// it once the daemon is orphaned.
func waitPid(t *testing.T, file string) int {
	t.Helper()
	type got struct {
		pid int
		err error
	}
	ch := make(chan got, 1)
	go func() { pid, err := daemonPid(file); ch <- got{pid, err} }()
	select {
	case g := <-ch:
		if g.err != nil {
			t.Fatalf("the daemon did not start: %v", g.err)
		}
		return g.pid
	case <-time.After(20 * time.Second):
		t.Fatal("the daemon did not start within 20s")
		return 0
	}
}

// hostPid is the pid here of the process whose environment holds env and
// whose pid is nsPid in the innermost pid namespace it is in; 0 if none.
func hostPid(nsPid int, env string) int {
	for ppid, kids := range processTree() {
		for _, p := range append(kids, ppid) {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/environ")
			if err != nil || !slices.Contains(strings.Split(string(b), "\x00"), env) {
				continue
			}
			st, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/status")
			for _, line := range strings.Split(string(st), "\n") {
				if f := strings.Fields(line); len(f) > 1 && f[0] == "NSpid:" && f[len(f)-1] == strconv.Itoa(nsPid) {
					return p
				}
			}
		}
	}
	return 0
}

func parentOf(pid int) int {
	for ppid, kids := range processTree() {
		for _, k := range kids {
			if k == pid {
				return ppid
			}
		}
	}
	return 0
}

func procState(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return strings.TrimSpace(string(b))
}
