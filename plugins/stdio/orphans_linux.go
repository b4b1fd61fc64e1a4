package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/children"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

// becomeSubreaper makes the plugin the reaper of every orphaned descendant
// of the servers it starts: a process a server leaves behind (a daemon that
// double-forked into a session of its own, out of the plugin's process
// group) is handed to the plugin instead of to init, so that killOrphans
// can stop it with the server.
func becomeSubreaper() error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return e
	}
	return nil
}

// awaitExit blocks until the child pid has exited, without reaping it
// (waitid with WNOWAIT): its exit status stays for exec.Cmd.Wait.
func awaitExit(pid int) {
	const pPID, wNOWAIT = 1, 0x1000000
	var info [128]byte // siginfo_t
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|wNOWAIT, 0, 0)
		if e != syscall.EINTR {
			return
		}
	}
}

// orphanReapWait bounds how long killOrphans waits for one killed process
// to be gone.
const orphanReapWait = 2 * time.Second

// killOrphans SIGKILLs every child of the plugin it did not start itself
// (package children),
// with all their descendants, reaps them, and returns how many it killed.
// It repeats until none is left, since killing one hands its own children
// to the plugin.
func killOrphans() int {
	killed := 0
	children.Hold(func(isOwn func(int) bool) {
		self := os.Getpid()
		for range 100 {
			tree := processTree()
			var orphans []int
			for _, pid := range tree[self] {
				if !isOwn(pid) {
					orphans = append(orphans, pid)
				}
			}
			if len(orphans) == 0 {
				return
			}
			for _, pid := range orphans {
				killTree(tree, pid)
				killed++
			}
			for _, pid := range orphans {
				reap(pid)
			}
		}
	})
	return killed
}

// killTree SIGKILLs pid and every descendant of it.
func killTree(tree map[int][]int, pid int) {
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for _, c := range tree[pid] {
		killTree(tree, c)
	}
}

// reap waits, within orphanReapWait, for a killed child to exit and
// collects it.
func reap(pid int) {
	deadline := time.Now().Add(orphanReapWait)
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if got == pid || err != nil || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// processTree maps each process id to its children, from /proc.
func processTree() map[int][]int {
	tree := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			tree[ppid] = append(tree[ppid], pid)
		}
	}
	return tree
}
