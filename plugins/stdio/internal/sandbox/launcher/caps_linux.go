package launcher

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// dropCapabilities leaves the calling thread, and what it executes, no
// capability at all: root inside Landlock otherwise keeps every one (it
// could bring network interfaces up, load BPF, bypass file modes). The
// bounding set goes first (that needs CAP_SETPCAP, so a non-root process,
// which has nothing there to use, skips it), then the ambient set, then
// the effective, permitted and inheritable sets. With an empty bounding set
// even a root execve gains nothing.
func dropCapabilities() error {
	last := lastCap()
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) {
				break // past the kernel's last capability
			}
			if errors.Is(err, unix.EPERM) && os.Geteuid() != 0 {
				break
			}
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear the ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear the capabilities: %w", err)
	}
	return nil
}

// lastCap is the kernel's highest capability number.
func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		if n, err := strconv.Atoi(string(bytes.TrimSpace(b))); err == nil && n > 0 && n < 64 {
			return n
		}
	}
	return 63 // PR_CAPBSET_DROP answers EINVAL past the last one
}

// setNoNewPrivs makes execve unable to grant privileges (set-user-ID
// files, file capabilities); Landlock and seccomp require it.
func setNoNewPrivs() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	return nil
}

// setLimits applies the resource limits: memory as RLIMIT_DATA (private
// writable memory; RLIMIT_AS breaks node, whose wasm reserves gigabytes of
// address space), CPU seconds (SIGXCPU at the limit, SIGKILL a second
// later), open files, and processes as RLIMIT_NPROC when nproc is set. A
// hard limit already lower than asked stays. syscall.Setrlimit (not a raw
// prlimit) keeps Go from restoring its own NOFILE soft limit at execve.
func setLimits(memory, cpu, files, procs uint64, nproc bool) error {
	set := func(name string, res int, soft, hard uint64) error {
		if soft == 0 {
			return nil
		}
		var cur syscall.Rlimit
		if err := syscall.Getrlimit(res, &cur); err == nil && cur.Max != unix.RLIM_INFINITY {
			soft, hard = min(soft, cur.Max), min(hard, cur.Max)
		}
		if err := syscall.Setrlimit(res, &syscall.Rlimit{Cur: soft, Max: hard}); err != nil {
			return fmt.Errorf("set %s to %d: %w", name, soft, err)
		}
		return nil
	}
	if err := set("RLIMIT_DATA", unix.RLIMIT_DATA, memory, memory); err != nil {
		return err
	}
	if err := set("RLIMIT_CPU", unix.RLIMIT_CPU, cpu, cpu+1); err != nil {
		return err
	}
	if err := set("RLIMIT_NOFILE", unix.RLIMIT_NOFILE, files, files); err != nil {
		return err
	}
	if nproc {
		if err := set("RLIMIT_NPROC", unix.RLIMIT_NPROC, procs, procs); err != nil {
			return err
		}
	}
	return nil
}
