package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// A forker is one thread of the plugin that sits in a server's pids cgroup
// before the server is asked for, so that the launcher it forks is born
// there and nothing waits for a move at the start.
//
// The launcher's parent-death signal (SIGKILL) is tied to the thread that
// forked it, not to the plugin, so the forker thread lives as long as the
// launch; it leaves the server's cgroup right after the fork (a move nobody
// waits for), and pids.max is the server's limit once it has.
//
// Moving a process between cgroup v1 hierarchies waits for an RCU grace
// period (10–16 ms measured on a 2-core machine for a plugin's first start),
// and the launcher cannot start the server until it is in its cgroup. A
// process inherits the cgroup of the thread that forked it, and cgroup v1
// places threads one by one: so when the host says at the plugin's start
// that its server will have a process limit (transport.PrepareEnv), the
// plugin makes the cgroup and moves one locked thread into it while the
// host and the plugin shake hands. New then takes the prepared cgroup, and
// the launcher is forked from that thread.
type forker struct {
	cg *pidsCgroup
	// base is the cgroup the thread leaves cg for after the fork; max is
	// cg's pids.max once it has left (set by New).
	base string
	max  uint64
	jobs chan func()
	// ready is closed once the thread is in cg (or failed to get there:
	// err says why, and the forker is not used).
	ready chan struct{}
	err   error
}

var (
	preparedMu sync.Mutex
	prepared   *forker
)

// Prepare starts, in the background, a pids cgroup and a forker thread in
// it for the next sandboxed start (see forker). Where the plugin cannot
// make a pids cgroup there (not root, no v1 pids hierarchy) the start goes
// as it always did.
func Prepare() {
	f := &forker{jobs: make(chan func()), ready: make(chan struct{})}
	preparedMu.Lock()
	prepared = f
	preparedMu.Unlock()
	go f.setup()
}

// setup makes the forker's cgroup and moves its thread there.
func (f *forker) setup() {
	if !runsAsRoot() {
		f.fail(errors.New("not root"))
		return
	}
	base, err := pidsBase()
	if err == nil && isCgroup2(base) {
		// cgroup v2 places whole processes only (and lets a process be
		// started straight into a cgroup, which needs no forker).
		err = errors.New("cgroup v2")
	}
	if err != nil {
		f.fail(err)
		return
	}
	// pids.max is set by New, once the limit is known; until then the
	// cgroup holds the forker thread alone.
	f.base = base
	if f.cg, err = newPidsCgroup(base, 1); err != nil {
		f.fail(err)
		return
	}
	f.run()
}

// fail ends a forker that could not be prepared.
func (f *forker) fail(err error) {
	f.err = err
	close(f.ready)
}

// isCgroup2 reports whether base lies on a cgroup v2 mount.
func isCgroup2(base string) bool {
	var st unix.Statfs_t
	return unix.Statfs(base, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// takePrepared hands the prepared forker to one start, once; nil when
// there is none or it failed. It waits for the thread's move under way:
// a start never waits longer than the move it would make itself.
func takePrepared() *forker {
	preparedMu.Lock()
	f := prepared
	prepared = nil
	preparedMu.Unlock()
	if f == nil {
		return nil
	}
	<-f.ready
	if f.err != nil {
		if f.cg != nil {
			f.cg.remove()
		}
		return nil
	}
	return f
}

// run is the forker's goroutine: on a thread of its own (never the main
// thread, which cannot end), moved into the cgroup, it runs the one job it
// is given, leaves the cgroup and waits for the launch to end, then ends,
// taking the thread with it.
func (f *forker) run() { f.runLocked(nil) }

// runLocked is run; off, when not nil, is closed once the goroutine holds
// a thread other than the main one.
func (f *forker) runLocked(off chan struct{}) {
	runtime.LockOSThread()
	if unix.Gettid() == os.Getpid() {
		// The main thread: hand over to a goroutine that, this thread
		// being locked while it waits, runs on another one.
		moved := make(chan struct{})
		go f.runLocked(moved)
		<-moved
		runtime.UnlockOSThread()
		return
	}
	if off != nil {
		close(off)
	}
	// Not unlocked: the thread ends with the goroutine, so it leaves the
	// cgroup and no other goroutine ever runs in it.
	tid := strconv.Itoa(unix.Gettid())
	if err := os.WriteFile(filepath.Join(f.cg.dir, "tasks"), []byte(tid), 0); err != nil {
		f.fail(fmt.Errorf("move a thread into the pids cgroup %s: %w", f.cg.dir, err))
		return
	}
	close(f.ready)
	job, ok := <-f.jobs
	if !ok {
		return
	}
	job()
	// The launcher's parent-death signal is tied to the thread that forked
	// it, so the thread lives as long as the launch (until Close closes
	// jobs); it leaves the server's cgroup now, and the limit is the
	// server's own once it has.
	if os.WriteFile(filepath.Join(f.base, "tasks"), []byte(tid), 0) == nil {
		_ = f.cg.setMax(f.max)
	}
	for range f.jobs {
	}
}

// fork runs start (which forks the launcher) on the forker's thread, and
// returns its error. The thread then leaves the cgroup, and ends when the
// launch does.
func (f *forker) fork(start func() error) error {
	errc := make(chan error, 1)
	f.jobs <- func() { errc <- start() }
	return <-errc
}
