package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/sys/fs/cgroup/my\040dir\\x`); got != `/sys/fs/cgroup/my dir\\x` {
		t.Fatalf("got %q", got)
	}
}

func TestCgroupMountPath(t *testing.T) {
	m := cgroupMount{root: "/", mountPoint: "/sys/fs/cgroup/pids"}
	if p, err := m.path("/user/1"); err != nil || p != "/sys/fs/cgroup/pids/user/1" {
		t.Fatalf("root mount: %q, %v", p, err)
	}
	m = cgroupMount{root: "/lxc/c1", mountPoint: "/sys/fs/cgroup"}
	if p, err := m.path("/lxc/c1/x"); err != nil || p != "/sys/fs/cgroup/x" {
		t.Fatalf("sub mount: %q, %v", p, err)
	}
	if _, err := m.path("/other"); err == nil {
		t.Fatal("a cgroup outside the mount was accepted")
	}
}

// As root, where the machine has a pids controller, a server's cgroup
// bounds its processes and is removed afterwards.
func TestPidsCgroup(t *testing.T) {
	if !runsAsRoot() {
		t.Skip("making cgroups needs root here")
	}
	base, err := pidsBase()
	if err != nil {
		t.Skipf("no pids controller: %v", err)
	}
	cg, err := newPidsCgroup(base, 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := cg.limit(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(cg.dir, "pids.max"))
	if err != nil || string(b) != "7\n" {
		t.Fatalf("pids.max = %q, %v", b, err)
	}
	cg.remove()
	if _, err := os.Stat(cg.dir); !os.IsNotExist(err) {
		t.Fatalf("cgroup %s still there: %v", cg.dir, err)
	}
	// A cgroup of a plugin that no longer runs is removed by the next.
	stale := filepath.Join(base, cgroupPrefix+strconv.Itoa(1<<22+12345)+"-1")
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	cg, err = newPidsCgroup(base, 7)
	if err != nil {
		t.Fatal(err)
	}
	cg.remove()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		_ = os.Remove(stale)
		t.Fatalf("stale cgroup %s was not removed: %v", stale, err)
	}
}

// On a cgroup v1 pids hierarchy a launcher is born in its server's cgroup:
// the child is inside, no thread of the plugin stays there, and the bound
// written afterwards holds for what the child starts.
func TestBornInsidePidsCgroup(t *testing.T) {
	if !runsAsRoot() {
		t.Skip("making cgroups needs root here")
	}
	base, err := pidsBase()
	if err != nil {
		t.Skipf("no pids controller: %v", err)
	}
	cg, err := newPidsCgroup(base, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.remove()
	if !cg.v1 {
		t.Skip("cgroup v2: a launcher is moved, not born inside")
	}
	// The child starts four sleeps in the background once told to: with
	// the bound of 3 (itself and two), the third is refused, which ends
	// the shell (dash), or which it gives up on (bash) and then waits for
	// the sleeps it has. Either way its end comes after the refusal.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", `read x; for i in 1 2 3 4; do sleep 30 & done 2>/dev/null; wait`)
	cmd.Stdin = r
	inside, err := cg.bornInside(func() error { return cmd.Start() })
	if err != nil || !inside {
		w.Close()
		t.Fatalf("bornInside: inside %v, %v", inside, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		// The shell and every sleep it started (orphans once it dies).
		b, _ := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		<-exited
	}()
	procs, err := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
	if err != nil || strings.TrimSpace(string(procs)) != strconv.Itoa(cmd.Process.Pid) {
		t.Fatalf("cgroup.procs = %q (%v), want only the child %d", procs, err, cmd.Process.Pid)
	}
	tasks, err := os.ReadFile(filepath.Join(cg.dir, "tasks"))
	if err != nil || strings.TrimSpace(string(tasks)) != strconv.Itoa(cmd.Process.Pid) {
		t.Fatalf("tasks = %q (%v): a thread of the plugin stayed in the cgroup", tasks, err)
	}
	if err := cg.limit(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// Once the shell has ended, the bound was hit and the count never
	// passed it.
	<-exited
	exited <- nil // for the cleanup
	if b, err := os.ReadFile(filepath.Join(cg.dir, "pids.events")); err != nil || strings.TrimSpace(strings.TrimPrefix(string(b), "max")) == "0" {
		t.Fatalf("pids.events = %q (%v): no fork was refused at the bound", b, err)
	}
	b, err := os.ReadFile(filepath.Join(cg.dir, "pids.current"))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(string(b))); n > 3 {
		t.Fatalf("pids.current = %d, over the bound of 3", n)
	}
}
