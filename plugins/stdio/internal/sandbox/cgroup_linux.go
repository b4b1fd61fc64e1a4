package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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
	// base is the plugin's own pids cgroup (pidsBase), the parent of dir.
	base string
	// max is the bound; on v1 it is written only once the launcher is in
	// (limit), since a launcher born inside starts its runtime there.
	max uint64
	// v1 is set for a cgroup v1 hierarchy, where a single thread can be
	// placed on its own (bornInside).
	v1 bool
	// limited is set once pids.max holds max.
	limited bool
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

// newPidsCgroup makes a pids cgroup for one server under base (pidsBase),
// after removing the empty ones plugins that were killed left behind. On
// cgroup v2 pids.max = max at once; on v1 limit writes it, once the
// launcher is in (see bornInside).
func newPidsCgroup(base string, max uint64) (*pidsCgroup, error) {
	removeStale(base)
	dir := filepath.Join(base, fmt.Sprintf("%s%d-%d", cgroupPrefix, os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make the pids cgroup: %w", err)
	}
	c := &pidsCgroup{dir: dir, base: base, max: max}
	// A v1 hierarchy lists threads in "tasks"; v2 has no such file.
	if _, err := os.Stat(filepath.Join(dir, "tasks")); err == nil {
		c.v1 = true
		return c, nil
	}
	if err := c.limit(); err != nil {
		c.remove()
		return nil, err
	}
	return c, nil
}

// limit writes pids.max.
func (c *pidsCgroup) limit() error {
	if c.limited {
		return nil
	}
	if err := os.WriteFile(filepath.Join(c.dir, "pids.max"), []byte(strconv.FormatUint(c.max, 10)), 0); err != nil {
		return fmt.Errorf("set pids.max of %s: %w", c.dir, err)
	}
	c.limited = true
	return nil
}

// bornInside runs start (the fork of the launcher) on a thread of this
// process placed in the cgroup for the fork only, so that the launcher is
// born in it and never moved. Moving a process (add) write-locks the
// kernel's cgroup threadgroup lock, which first waits for an RCU grace
// period: 7-24 ms after a quiet while, most of what a sandbox added to a
// server's start. A thread that moves itself (v1's "tasks", written "0")
// takes no such lock: about 0.1 ms each way. Only a v1 hierarchy places a
// thread apart from its process; on v2 (or when the thread cannot be
// placed) inside is false with no error and nothing started, and the
// caller starts the launcher as usual and moves it (add).
//
// The thread is locked to its goroutine meanwhile, so nothing else runs
// on it; threads the runtime starts meanwhile are started by its template
// thread, not by a locked one, so they stay where they were. The bound is
// written afterwards (limit), before the launcher may start the server,
// as it was for a moved launcher: the launcher's runtime threads are
// counted but never refused.
func (c *pidsCgroup) bornInside(start func() error) (inside bool, err error) {
	if !c.v1 {
		return false, nil
	}
	type result struct {
		inside bool
		err    error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		if err := os.WriteFile(filepath.Join(c.dir, "tasks"), []byte("0"), 0); err != nil {
			runtime.UnlockOSThread()
			done <- result{}
			return
		}
		serr := start()
		if err := os.WriteFile(filepath.Join(c.base, "tasks"), []byte("0"), 0); err != nil {
			// The thread stays locked, so it ends with this goroutine
			// and leaves the cgroup empty of it; its end kills a
			// launcher it started (the parent-death signal is the
			// thread's), which the error stops anyway.
			done <- result{true, errors.Join(serr, fmt.Errorf("leave the pids cgroup %s after starting the launcher: %w", c.dir, err))}
			return
		}
		runtime.UnlockOSThread()
		done <- result{true, serr}
	}()
	r := <-done
	return r.inside, r.err
}

// add moves process pid (all its threads) into the cgroup.
func (c *pidsCgroup) add(pid int) error {
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("move the server into its pids cgroup %s: %w", c.dir, err)
	}
	return c.limit()
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
