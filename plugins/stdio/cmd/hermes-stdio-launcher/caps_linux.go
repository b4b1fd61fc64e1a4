package main

import (
	"syscall"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
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
			if err == unix.EINVAL {
				break // past the kernel's last capability
			}
			if err == unix.EPERM && unix.Geteuid() != 0 {
				break
			}
			return wrap("drop capability "+itoa(c)+" from the bounding set", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return wrap("clear the ambient capabilities", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return wrap("clear the capabilities", err)
	}
	return nil
}

// lastCap is the kernel's highest capability number.
func lastCap() int {
	fd, err := unix.Open("/proc/sys/kernel/cap_last_cap", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err == nil {
		var b [16]byte
		n, _ := unix.Read(fd, b[:])
		unix.Close(fd)
		for n > 0 && (b[n-1] == '\n' || b[n-1] == ' ') {
			n--
		}
		if n > 0 {
			if c, ok := atoi(string(b[:n])); ok && c > 0 && c < 64 {
				return c
			}
		}
	}
	return 63 // PR_CAPBSET_DROP answers EINVAL past the last one
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
			return wrap("set "+name+" to "+launcher.FormatUint(soft), err)
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

func itoa(n int) string {
	if n < 0 {
		return "-" + launcher.FormatUint(uint64(-n))
	}
	return launcher.FormatUint(uint64(n))
}
