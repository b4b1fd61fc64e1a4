package testserver_test

import (
	"github.com/hermes-agent/hermes/internal/testproc"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// --daemon leaves an orphaned daemon in a session of its own, which
// ignores SIGTERM.
func TestDaemon(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	cmd := exec.Command(binPath, "--daemon", pidFile)
	cmd.Stdin = strings.NewReader("") // a stdio server: it ends at once
	cmd.Stderr = os.Stderr            // not a pipe the daemon would hold open
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := testproc.PidFile(t, pidFile, "the daemon's pid", 10*time.Second)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	ppid, sid := statOf(t, pid)
	if sid != pid {
		t.Fatalf("daemon %d: session %d, want a session of its own", pid, sid)
	}
	if ppid == cmd.Process.Pid {
		t.Fatalf("daemon %d is still the server's child", pid)
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if mask&(1<<(syscall.SIGTERM-1)) == 0 {
				t.Fatalf("daemon %d does not ignore SIGTERM (SigIgn %s)", pid, strings.TrimSpace(v))
			}
			return
		}
	}
	t.Fatal("no SigIgn line")
}

// statOf returns the parent and the session of pid.
func statOf(t *testing.T, pid int) (ppid, sid int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ppid, _ = strconv.Atoi(f[1])
	sid, _ = strconv.Atoi(f[3])
	return ppid, sid
}
