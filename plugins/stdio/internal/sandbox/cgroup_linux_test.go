package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
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
