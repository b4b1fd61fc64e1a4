package bench_test

import (
	"github.com/hermes-agent/hermes/internal/testwait"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hermes-agent/hermes/internal/testproc"
)

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER, linux/prctl.h

// adoptOrphans makes this process the reaper of its orphaned descendants
// (PR_SET_CHILD_SUBREAPER): a plugin that outlives its one-shot hermes, and
// the server it stops, are then reparented here instead of to init, so
// their CPU time reaches this process's RUSAGE_CHILDREN when reapOrphans
// collects them. The returned func undoes it.
func adoptOrphans() (undo func(), ok bool) {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return func() {}, false
	}
	return func() { _, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0) }, true
}

// children returns the pids whose parent is this process, zombies
// included (they are what reapOrphans reaps).
func children() map[int]bool {
	self := os.Getpid()
	out := map[int]bool{}
	for _, st := range testproc.All() {
		if st.PPID == self {
			out[st.PID] = true
		}
	}
	return out
}

// reapOrphans waits, up to limit, until every child of this process that
// is not in keep has exited, and reaps it (adding its CPU time, and that of
// the children it reaped, to RUSAGE_CHILDREN). It reports whether all were
// gone in time.
func reapOrphans(keep map[int]bool, limit time.Duration) bool {
	return testwait.Until(limit, func() bool {
		left := 0
		for pid := range children() {
			if keep[pid] {
				continue
			}
			var ws syscall.WaitStatus
			if got, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got != pid {
				left++
			}
		}
		return left == 0
	})
}

// childrenCPU is the user+system CPU time of every reaped child of this
// process so far, and of the children they reaped.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is the user+system CPU time so far of a running process (not
// of its children), from /proc/PID/stat, in clock ticks of 10 ms (USER_HZ
// is 100 on Linux); 0 when it cannot be read.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name, field 2, is in parentheses and may hold spaces;
	// utime and stime are fields 14 and 15.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
