package main

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/sdk"
)

// closeInherited closes every descriptor above 2 the plugin inherited and
// does not use: what hermes's caller left open (`hermes mcp call ...
// 7<secret`), which hermes hands on to its plugins, and the plugin's own
// binary that the host executes through a descriptor. Only the message
// socket the host passes (sdk.StreamFDEnv) stays, marked close-on-exec so
// no server gets it. Inherited means not close-on-exec: every descriptor
// Go opens is, and every one that came through execve is not. Call it
// first thing in main, before any server is started.
func closeInherited() {
	keep := -1
	if fd, err := strconv.Atoi(os.Getenv(sdk.StreamFDEnv)); err == nil && fd > 2 {
		keep = fd
	}
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		// No /proc: mark everything close-on-exec at least, so no
		// server gets it.
		_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // gone (the listing's own), or Go's
		}
		if fd == keep {
			unix.CloseOnExec(fd)
			continue
		}
		_ = unix.Close(fd)
	}
}
