// Package testproc lets tests see processes the way the kernel does (Linux
// /proc): whether one is still running, its parent, its children and
// descendants, and a bounded wait until some are gone. Tests use it to
// prove that no plugin or server outlives what it should. Test code only.
package testproc

import (
	"github.com/hermes-agent/hermes/internal/testwait"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Stat is the part of /proc/PID/stat tests need.
type Stat struct {
	PID, PPID int
	// State is the process state letter: R, S, D, Z (zombie), ...
	State byte
}

// Read returns the stat of pid; ok is false when there is no such process.
func Read(pid int) (st Stat, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Stat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 || len(f[0]) == 0 {
		return Stat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return Stat{PID: pid, PPID: ppid, State: f[0][0]}, true
}

// All returns the stat of every process.
func All() []Stat {
	ents, _ := os.ReadDir("/proc")
	var out []Stat
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := Read(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool {
	st, ok := Read(pid)
	return ok && st.State != 'Z'
}

// Parent returns the parent of pid, or 0.
func Parent(pid int) int {
	st, _ := Read(pid)
	return st.PPID
}

// Children returns the live processes whose parent is pid.
func Children(pid int) []int {
	var out []int
	for _, st := range All() {
		if st.PPID == pid && st.State != 'Z' {
			out = append(out, st.PID)
		}
	}
	return out
}

// Descendants returns every live process below pid.
func Descendants(pid int) []int {
	children := map[int][]int{}
	for _, st := range All() {
		if st.State != 'Z' {
			children[st.PPID] = append(children[st.PPID], st.PID)
		}
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	return out
}

// Ended is what PidFile returns for a process that has already ended: no
// process can have it (the kernel's pids stop at 2^22), so it is never
// alive, and a signal to it reaches nobody.
const Ended = 1<<22 + 1

// PidFile waits, up to limit, for a process id in the file at path (a
// daemon given path among its arguments writes it), and returns it; it
// fails the test with what. A daemon
// in a pid namespace of its own (a stdio server's) writes the pid that
// namespace gives it: when a process with path among its arguments has
// that pid there, its pid here is returned instead; when a process that
// had path among its arguments is not found, Ended.
func PidFile(t testing.TB, path, what string, limit time.Duration) int {
	t.Helper()
	var pid int
	testwait.For(t, limit, what, func() bool {
		if b, err := os.ReadFile(path); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		return pid > 0
	})
	if p := HostPid(pid, path); p > 0 {
		return p
	}
	return Ended
}

// HostPid returns the pid, in the test's pid namespace, of the process
// that has nsPid in the innermost pid namespace it is in and arg among its
// arguments; 0 when there is none.
func HostPid(nsPid int, arg string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !hasArg(cmdline, arg) {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "NSpid:" && f[len(f)-1] == strconv.Itoa(nsPid) {
				return pid
			}
		}
	}
	return 0
}

// NSPid returns the pid that pid has in the innermost pid namespace it is
// in (the pid a server in a pid namespace of its own reports for itself);
// pid itself when it is in the test's, 0 when there is no such process.
func NSPid(pid int) int {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "NSpid:" {
			n, _ := strconv.Atoi(f[len(f)-1])
			return n
		}
	}
	return pid
}

// Below returns the process among the descendants of pid whose pid in its
// own pid namespace is nsPid (see NSPid), or 0.
func Below(pid, nsPid int) int {
	for _, p := range Descendants(pid) {
		if NSPid(p) == nsPid {
			return p
		}
	}
	return 0
}

// HostPidByEnv is HostPid for a process found by an entry of its
// environment (NAME=value) instead of an argument.
func HostPidByEnv(nsPid int, kv string) int {
	for _, st := range All() {
		env, err := os.ReadFile("/proc/" + strconv.Itoa(st.PID) + "/environ")
		if err == nil && st.State != 'Z' && hasArg(env, kv) && NSPid(st.PID) == nsPid {
			return st.PID
		}
	}
	return 0
}

func hasArg(cmdline []byte, arg string) bool {
	for _, a := range strings.Split(string(cmdline), "\x00") {
		if a == arg {
			return true
		}
	}
	return false
}

// WaitGone waits, up to limit, until none of pids is alive, and fails the
// test with what naming the survivors otherwise.
func WaitGone(t testing.TB, what string, limit time.Duration, pids ...int) {
	t.Helper()
	var left []int
	gone := testwait.Until(limit, func() bool {
		left = left[:0]
		for _, p := range pids {
			if Alive(p) {
				left = append(left, p)
			}
		}
		return len(left) == 0
	})
	if !gone {
		t.Fatalf("%s: %v still running after %s", what, left, limit)
	}
}
