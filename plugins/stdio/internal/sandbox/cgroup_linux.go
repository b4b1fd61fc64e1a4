package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// pidsCgroup is a pids cgroup made for one server: every process and
// thread the server starts is counted in it, and pids.max bounds them. It
// is what bounds a root server's processes, since the kernel ignores
// RLIMIT_NPROC for root.
type pidsCgroup struct {
	dir string
}

// cgroupPrefix starts the name of every cgroup the plugin makes; the
// plugin's pid follows, so a stale one (its plugin was killed) is known.
const cgroupPrefix = "hermes-sandbox-"

var cgroupSeq atomic.Int64

// pidsBase finds the folder of this process's own pids cgroup, under which
// it may make children: cgroup v2 when its pids controller is enabled for
// children there, else the v1 pids hierarchy.
func pidsBase() (string, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return "", err
	}
	own, err := ownCgroups()
	if err != nil {
		return "", err
	}
	var why []string
	if m, ok := mounts["cgroup2"]; ok {
		if p, ok := own[""]; ok {
			dir, err := m.path(p)
			if err == nil {
				b, rerr := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
				if rerr == nil && hasWord(string(b), "pids") {
					return dir, nil
				}
				why = append(why, "the cgroup v2 "+p+" does not enable the pids controller for its children")
			}
		}
	}
	if m, ok := mounts["pids"]; ok {
		if p, ok := own["pids"]; ok {
			dir, err := m.path(p)
			if err != nil {
				return "", err
			}
			return dir, nil
		}
	}
	why = append(why, "no cgroup v1 pids hierarchy is mounted")
	return "", errors.New(strings.Join(why, "; "))
}

// cgroupMount is one mounted cgroup hierarchy.
type cgroupMount struct {
	root, mountPoint string
}

// path is the folder of the cgroup p within the hierarchy.
func (m cgroupMount) path(p string) (string, error) {
	rel, ok := strings.CutPrefix(p, m.root)
	if m.root == "/" {
		rel, ok = p, true
	}
	if !ok {
		return "", fmt.Errorf("cgroup %s is outside the mounted hierarchy %s", p, m.root)
	}
	return filepath.Join(m.mountPoint, rel), nil
}

// cgroupMounts reads /proc/self/mountinfo: "cgroup2" for the v2 mount, and
// each v1 controller name for the mount that carries it.
func cgroupMounts() (map[string]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]cgroupMount{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, af := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(af) < 3 {
			continue
		}
		m := cgroupMount{root: unescapeMount(pf[3]), mountPoint: unescapeMount(pf[4])}
		switch af[0] {
		case "cgroup2":
			if _, seen := out["cgroup2"]; !seen {
				out["cgroup2"] = m
			}
		case "cgroup":
			for _, o := range strings.Split(af[2], ",") {
				if _, seen := out[o]; !seen {
					out[o] = m
				}
			}
		}
	}
	return out, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroups reads /proc/self/cgroup: controller name (or "" for v2) to
// this process's cgroup path.
func ownCgroups() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, nil
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// newPidsCgroup makes a pids cgroup for one server with pids.max = max
// under base (pidsBase), after removing the empty ones plugins that were
// killed left behind.
func newPidsCgroup(base string, max uint64) (*pidsCgroup, error) {
	removeStale(base)
	dir := filepath.Join(base, fmt.Sprintf("%s%d-%d", cgroupPrefix, os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make the pids cgroup: %w", err)
	}
	c := &pidsCgroup{dir: dir}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.FormatUint(max, 10)), 0); err != nil {
		c.remove()
		return nil, fmt.Errorf("set pids.max of %s: %w", dir, err)
	}
	return c, nil
}

// warmMoves starts, ahead of the move of a launcher into its pids cgroup
// (add), the wait that a move between cgroups begins with after a quiet
// while: the kernel's cgroup lock waits for an RCU grace period (about
// 10 ms on a loaded 2-core machine) before its first writer, and not
// again for writers that come within it. It moves this process into the
// cgroup it is in already (base, its own: pidsBase), which changes nothing,
// so that the grace period runs while the plugin prepares the sandbox and
// starts the launcher, and the launcher's own move finds it under way or
// passed. Call it in the background; failure only forgoes the head start.
func warmMoves(base string) {
	_ = os.WriteFile(filepath.Join(base, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0)
}

// add moves process pid (all its threads) into the cgroup.
func (c *pidsCgroup) add(pid int) error {
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("move the server into its pids cgroup %s: %w", c.dir, err)
	}
	return nil
}

// cgroupRemoveWait bounds how long remove waits for the last processes of
// the cgroup to be gone (reaped) before it gives up.
const cgroupRemoveWait = 2 * time.Second

// remove deletes the cgroup once it is empty.
func (c *pidsCgroup) remove() {
	deadline := time.Now().Add(cgroupRemoveWait)
	for {
		err := syscall.Rmdir(c.dir)
		if err == nil || errors.Is(err, syscall.ENOENT) || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// removeStale deletes the cgroups of plugins that no longer run.
func removeStale(base string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = syscall.Rmdir(filepath.Join(base, e.Name()))
		}
	}
}
