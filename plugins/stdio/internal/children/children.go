// Package children is the stdio plugin's register of the processes it
// started itself: its servers (or their launchers) and their filtering
// proxies, alive or not yet reaped. On Linux the plugin is a child
// subreaper, so every other child it has is an orphan a server left behind,
// which it kills when that server ends. Start and Hold share one lock, so
// a child is never seen between its fork and its registration.
package children

import (
	"os/exec"
	"sync"
)

var (
	mu  sync.Mutex
	own = map[int]bool{}
)

// Start starts cmd (exec.Cmd.Start) and registers it as one of the
// plugin's own children.
func Start(cmd *exec.Cmd) error {
	mu.Lock()
	defer mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	own[cmd.Process.Pid] = true
	return nil
}

// Reaped forgets a child Start started, once it has been waited for (its
// pid may then be reused).
func Reaped(pid int) {
	mu.Lock()
	delete(own, pid)
	mu.Unlock()
}

// Hold runs f with the register locked, so that no child is started
// meanwhile; isOwn reports whether pid is a child Start started.
func Hold(f func(isOwn func(pid int) bool)) {
	mu.Lock()
	defer mu.Unlock()
	f(func(pid int) bool { return own[pid] })
}
