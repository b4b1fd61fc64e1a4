package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/sdk/transport"
)

// A start prepared by Prepare forks its launcher from a thread already in
// the server's pids cgroup: the launcher is in it from its birth (no move),
// the forker thread then leaves, pids.max becomes the server's own limit,
// and the launcher outlives that move (its parent-death signal is tied to
// the forker thread, which lives as long as the launch). Close empties and
// removes the cgroup.
func TestPreparedForker(t *testing.T) {
	if !runsAsRoot() {
		t.Skip("making cgroups needs root here")
	}
	base, err := pidsBase()
	if err != nil || isCgroup2(base) {
		t.Skipf("no cgroup v1 pids hierarchy: %v", err)
	}
	Prepare()
	const limit = 9
	cfg := transport.Config{Server: "forked", Command: "/bin/sleep", Args: []string{"60"},
		Sandbox: &transport.Sandbox{Network: transport.Network{Mode: transport.NetworkAll}, Limits: transport.Limits{Processes: limit}}}
	l, err := New(cfg, "/bin/sleep", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.forker == nil || l.cg == nil {
		t.Fatal("New did not take the prepared forker")
	}
	dir := l.cg.dir
	if got := readTrim(t, filepath.Join(dir, "pids.max")); got != strconv.Itoa(limit+1) {
		t.Fatalf("pids.max with the forker in = %s, want %d", got, limit+1)
	}
	cmd := exec.Command("/bin/sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // as the plugin starts it
	if err := l.Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	if err := l.Spawn(cmd.Start); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if !l.born {
		t.Fatal("the launcher was not forked by the forker")
	}
	if err := l.Started(context.Background(), cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if cg := readTrim(t, "/proc/"+strconv.Itoa(cmd.Process.Pid)+"/cgroup"); !strings.Contains(cg, filepath.Base(dir)) {
		t.Fatalf("the launcher is not in %s:\n%s", dir, cg)
	}
	// The forker thread leaves in the background; wait for it (bounded
	// generously, never a figure of speed).
	deadline := time.Now().Add(30 * time.Second)
	for readTrim(t, filepath.Join(dir, "pids.max")) != strconv.Itoa(limit) {
		if time.Now().After(deadline) {
			t.Fatalf("pids.max stayed %s; the forker thread never left %s (tasks: %s)", readTrim(t, filepath.Join(dir, "pids.max")), dir, readTrim(t, filepath.Join(dir, "tasks")))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, tid := range strings.Fields(readTrim(t, filepath.Join(dir, "tasks"))) {
		if _, err := os.Stat("/proc/self/task/" + tid); err == nil {
			t.Fatalf("thread %s of this process is still in %s", tid, dir)
		}
	}
	if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
		t.Fatalf("the launcher died once the forker thread left: %v", err)
	}
	if st := readTrim(t, "/proc/"+strconv.Itoa(cmd.Process.Pid)+"/stat"); strings.Contains(st, ") Z ") {
		t.Fatalf("the launcher died once the forker thread left: %s", st)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	l.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("cgroup %s still there after Close: %v", dir, err)
	}
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
