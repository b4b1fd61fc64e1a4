package install

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// installSysProcAttr: the command gets its own process group (killed as
// one) and SIGKILL when hermes dies.
func installSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// clockTicks is USER_HZ, the unit of start times in /proc/<pid>/stat (100
// on every architecture Linux runs on today).
const clockTicks = 100

// procStat returns the process group and the start time of pid.
func procStat(pid int) (pgrp int, start uint64, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name (field 2) is in parentheses and may hold anything;
	// the fields after its last ")" start with field 3 (state).
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, 0, false
	}
	g, err1 := strconv.Atoi(f[2])                // field 5: pgrp
	st, err2 := strconv.ParseUint(f[19], 10, 64) // field 22: starttime
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return g, st, true
}

// procStart is the start time of pid (0 when unknown).
func procStart(pid int) uint64 {
	_, st, _ := procStat(pid)
	return st
}

// killProc kills what is left of the process group p of an install that
// died under it: every process in the group that started within the
// command's time limit after the group's leader (a group number reused
// since by something else started later). It waits, bounded, for them to
// be gone, so that none writes into a folder being restored.
func killProc(p *journalProc) {
	if p == nil || p.PGID <= 1 || p.PGID == syscall.Getpgrp() {
		return
	}
	latest := p.Start + uint64(max(p.Limit, 0)+60)*clockTicks
	members := func() []int {
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return nil
		}
		var pids []int
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			g, st, ok := procStat(pid)
			if ok && g == p.PGID && st >= p.Start && st <= latest {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := members()
		if len(pids) == 0 || time.Now().After(deadline) {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
