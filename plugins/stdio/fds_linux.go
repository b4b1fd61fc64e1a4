package main

import (
	"os"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/sdk"
)

// closeInherited closes every descriptor above 2 the plugin inherited and
// does not use: what hermes's caller left open (`hermes mcp call ...
// 7<secret`), which hermes hands on to its plugins, and the plugin's own
// binary that the host executes through a descriptor. Only the message
// socket the host passes (sdk.StreamFDEnv) and the pipe of an early open
// (sdk.EarlyOpenFDEnv) stay, marked close-on-exec so no server gets them. Inherited means not close-on-exec: every descriptor
// Go opens is, and every one that came through execve is not. Call it
// first thing in main, before any server is started.
func closeInherited() {
	var keep []int
	for _, env := range []string{sdk.StreamFDEnv, sdk.EarlyOpenFDEnv} {
		if fd, err := strconv.Atoi(os.Getenv(env)); err == nil && fd > 2 {
			keep = append(keep, fd)
		}
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
		if slices.Contains(keep, fd) {
			unix.CloseOnExec(fd)
			continue
		}
		_ = unix.Close(fd)
	}
}
