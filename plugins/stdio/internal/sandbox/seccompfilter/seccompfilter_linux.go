// Package seccompfilter holds the seccomp filters of the stdio plugin's
// sandbox: the policy of each network mode (system calls that fail with
// EPERM, sockets each mode allows) and the filter that refuses other
// system call ABIs, assembled to the classic BPF the launcher loads. They
// are constant per architecture and mode, so the plugin does not assemble
// them at run time on amd64: package sandbox keeps a table generated from
// Assemble (and checked against it by its tests), and only links this
// package, with its BPF assembler and syscall tables, on other
// architectures.
package seccompfilter

import (
	"fmt"
	"runtime"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
)

// deniedSyscalls fail with EPERM in every sandbox: nothing a normal MCP
// server calls, and each a way to reach out of the sandbox or attack the
// kernel (reading other processes' memory, kernel keyrings, BPF programs,
// namespaces and mounts, io_uring, which makes sockets without socket(2)).
var deniedSyscalls = []string{
	"ptrace", "process_vm_readv", "process_vm_writev",
	"bpf", "perf_event_open", "userfaultfd",
	"keyctl", "add_key", "request_key",
	"mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
	"open_tree", "move_mount", "fsopen", "fsmount", "fsconfig", "fspick",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
}

// cloneNamespaces are the clone(2) flags that make new namespaces.
const cloneNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWNET | unix.CLONE_NEWPID |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP

// nativeArch is the audit arch of this build, 0 where the sandbox has no
// seccomp filter.
func nativeArch() uint32 {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64
	}
	return 0
}

// seccompPolicy is the filter of a sandbox with network mode net. Every
// argument test is written "deny unless exactly equal": the filter sees
// all 64 bits while the kernel reads int arguments from the low 32, so a
// "deny if equal" test would be passed by setting the high bits.
func seccompPolicy(net string) seccomp.Policy {
	deny := seccomp.SyscallGroup{Action: seccomp.ActionErrno, Names: deniedSyscalls}
	cond := func(name string, cs ...seccomp.Condition) {
		deny.NamesWithCondtions = append(deny.NamesWithCondtions, seccomp.NameWithConditions{Name: name, Conditions: cs})
	}
	ne := func(arg uint32, v uint64) seccomp.Condition {
		return seccomp.Condition{Argument: arg, Operation: seccomp.NotEqual, Value: v}
	}
	eq := func(arg uint32, v uint64) seccomp.Condition {
		return seccomp.Condition{Argument: arg, Operation: seccomp.Equal, Value: v}
	}
	// Conditions in one entry are ANDed, entries ORed.
	cond("clone", seccomp.Condition{Argument: 0, Operation: seccomp.BitsSet, Value: cloneNamespaces})
	switch net {
	case launcher.NetworkNone:
		// Unix sockets, and netlink route (node lists interfaces).
		cond("socket", ne(0, unix.AF_UNIX), ne(0, unix.AF_NETLINK))
		cond("socket", ne(2, 0))
		cond("socketpair", ne(0, unix.AF_UNIX))
	case launcher.NetworkHosts:
		// TCP streams (to the proxy, as Landlock or the namespace
		// decides), Unix sockets, netlink route: no UDP (so no DNS), no
		// raw sockets, no MPTCP (protocol 262 bypasses Landlock).
		cond("socket", ne(0, unix.AF_UNIX), ne(0, unix.AF_NETLINK), ne(0, unix.AF_INET), ne(0, unix.AF_INET6))
		cond("socket", ne(0, unix.AF_UNIX), ne(0, unix.AF_NETLINK),
			seccomp.Condition{Argument: 1, Operation: seccomp.BitsSet, Value: 0xe}) // type & 0xf must be SOCK_STREAM
		cond("socket", ne(0, unix.AF_NETLINK), ne(2, 0), ne(2, unix.IPPROTO_TCP))
		cond("socket", eq(0, unix.AF_NETLINK), ne(2, 0))
		cond("socketpair", ne(0, unix.AF_UNIX))
	}
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{deny}}
}

// archFilter fails every system call made through another ABI than the
// native one (i386 int $0x80 on x86-64), which the policy above would let
// through untested, and makes clone3 answer ENOSYS: its flags sit in
// memory a filter cannot read, and the C libraries fall back to clone.
func archFilter() ([]bpf.RawInstruction, error) {
	return bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: nativeArch(), SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_CLONE3, SkipFalse: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
	})
}

// Assemble assembles the filters of a sandbox with network mode net, in
// the order the launcher installs them: the policy, then the arch filter.
func Assemble(net string) ([]launcher.Filter, error) {
	if nativeArch() == 0 {
		return nil, fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
	}
	switch net {
	case launcher.NetworkAll, launcher.NetworkNone, launcher.NetworkHosts:
	default:
		return nil, fmt.Errorf("no seccomp filter for network mode %q", net)
	}
	policy := seccompPolicy(net)
	insts, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("assemble the seccomp policy for network %s: %w", net, err)
	}
	raw, err := bpf.Assemble(insts)
	if err != nil {
		return nil, fmt.Errorf("assemble the seccomp policy for network %s: %w", net, err)
	}
	arch, err := archFilter()
	if err != nil {
		return nil, fmt.Errorf("assemble the seccomp arch filter: %w", err)
	}
	return []launcher.Filter{toFilter(raw), toFilter(arch)}, nil
}

// toFilter converts assembled instructions to the plan's.
func toFilter(raw []bpf.RawInstruction) launcher.Filter {
	f := make(launcher.Filter, len(raw))
	for i, in := range raw {
		f[i] = launcher.Instruction{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	return f
}
