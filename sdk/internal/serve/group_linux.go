package serve

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// maxGroupPasses bounds killOwnGroup's passes over /proc: a group still
// making processes after that many is killed whole, the plugin included.
const maxGroupPasses = 100

// killOwnGroup kills every other process of the plugin's process group, and
// so every server process it started, when the plugin leads its own group
// (the host starts it so). The plugin itself is spared, so that Exit ends
// it with status 0: a SIGKILL of the whole group took the plugin too, and
// its host, when still running, saw a plugin that finished on purpose die
// of "signal: killed" and logged it as a crash.
//
// Each pass lists the group's live members in /proc and SIGKILLs those not
// killed yet; it ends with a pass that finds none. A process with a SIGKILL
// pending can start no other, so a member forked before its parent was
// killed is found by the next pass. When /proc cannot be read, or after
// maxGroupPasses, the whole group is killed at once.
func killOwnGroup() {
	pid := os.Getpid()
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		return
	}
	killed := map[int]bool{pid: true}
	for range maxGroupPasses {
		members, err := groupMembers(pid)
		if err != nil {
			break
		}
		fresh := false
		for _, m := range members {
			if !killed[m] {
				killed[m] = true
				fresh = true
				_ = syscall.Kill(m, syscall.SIGKILL)
			}
		}
		if !fresh {
			return
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// groupMembers lists the processes of process group pgid that have not
// exited (zombies left out), from /proc.
func groupMembers(pgid int) ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, n := range names {
		p, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// "pid (comm) state ppid pgrp ...": comm may hold spaces and
		// parentheses, so the fields are read after its last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 3 || f[0][0] == 'Z' || f[0][0] == 'X' {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err == nil && g == pgid {
			out = append(out, p)
		}
	}
	return out, nil
}
