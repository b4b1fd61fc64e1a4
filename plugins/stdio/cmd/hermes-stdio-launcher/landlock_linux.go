package main

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
)

// Landlock through raw system calls on the calling thread only. The
// launcher executes the server from that same locked thread right after, and
// a restricted thread's domain is what execve hands on; so none of the
// all-threads machinery is needed.

// rulesetAttr is struct landlock_ruleset_attr up to its scoped field (ABI 6).
type rulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

// netPortAttr is struct landlock_net_port_attr.
type netPortAttr struct {
	allowed uint64
	port    uint64
}

const (
	ruleNetPort       = 2 // LANDLOCK_RULE_NET_PORT
	netBindTCP        = unix.LANDLOCK_ACCESS_NET_BIND_TCP
	netConnectTCP     = unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	scopeAbstractUnix = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	scopeSignal       = unix.LANDLOCK_SCOPE_SIGNAL
)

// landlockRestrict restricts the calling thread: the filesystem to rules,
// TCP (when handleNet) to connecting to connectPorts, and, from ABI 6,
// signals and (when scopeUnix) abstract Unix sockets to its own domain. It
// needs no_new_privs set first.
func landlockRestrict(abi int, rules []launcher.Rule, handleNet bool, connectPorts []int, scopeUnix bool) error {
	attr := rulesetAttr{handledFS: launcher.HandledFS(abi)}
	if handleNet && abi >= launcher.ABINet {
		attr.handledNet = netBindTCP | netConnectTCP
	}
	if abi >= launcher.ABIScope {
		attr.scoped = scopeSignal
		if scopeUnix {
			attr.scoped |= scopeAbstractUnix
		}
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return wrap("create the Landlock ruleset", e)
	}
	defer unix.Close(int(fd))
	for _, r := range rules {
		if err := addPathRule(int(fd), r, attr.handledFS); err != nil {
			return err
		}
	}
	if attr.handledNet != 0 {
		for _, port := range connectPorts {
			pa := netPortAttr{allowed: netConnectTCP, port: uint64(port)}
			if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, ruleNetPort, uintptr(unsafe.Pointer(&pa)), 0, 0, 0); e != 0 {
				return wrap("allow TCP port "+itoa(port), e)
			}
		}
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return wrap("enforce the Landlock ruleset", e)
	}
	return nil
}

// addPathRule adds one rule; a path that does not exist (any more) is
// skipped, since nothing there can be reached through it.
func addPathRule(rulesetFD int, r launcher.Rule, handled uint64) error {
	if r.Strict {
		return addStrictRule(rulesetFD, r, handled)
	}
	flags := unix.O_PATH | unix.O_CLOEXEC
	if r.NoFollow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(r.Path, flags, 0)
	if err != nil {
		if err == unix.ENOENT || err == unix.ENOTDIR || err == unix.ELOOP {
			return nil
		}
		return wrap("open "+r.Path+" for a Landlock rule", err)
	}
	defer unix.Close(fd)
	return addRuleFD(rulesetFD, fd, r, handled)
}

// addStrictRule adds the rule of a path resolved when the plan was made: no
// symbolic link may lie anywhere on the way (openat2 RESOLVE_NO_SYMLINKS),
// and the path must be the object the plan names.
func addStrictRule(rulesetFD int, r launcher.Rule, handled uint64) error {
	fd, err := unix.Openat2(unix.AT_FDCWD, r.Path, &unix.OpenHow{
		Flags: unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err == unix.ENOENT {
		return nil // removed since: nothing to grant
	}
	if err != nil {
		return errorf("open "+r.Path+" for a Landlock rule without following links", err, " (a symbolic link replaced part of it since the plan was made)")
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return wrap("stat "+r.Path+" for a Landlock rule", err)
	}
	if (r.Dev != 0 || r.Ino != 0) && (st.Dev != r.Dev || st.Ino != r.Ino) {
		return errorText(r.Path + " was replaced since the plan was made; start the server again")
	}
	return addRuleFD(rulesetFD, fd, r, handled)
}

// addRuleFD adds the rule of r on the object fd holds.
func addRuleFD(rulesetFD, fd int, r launcher.Rule, handled uint64) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return wrap("stat "+r.Path+" for a Landlock rule", err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return nil // a link put there since the plan was made
	}
	access := r.Access & handled
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= launcher.FileRights
	}
	if access == 0 {
		return nil
	}
	pb := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&pb)), 0, 0, 0); e != 0 {
		return wrap("Landlock rule for "+r.Path, e)
	}
	return nil
}

// loadFilter installs one seccomp filter on the calling thread
// (no_new_privs must be set).
func loadFilter(f launcher.Filter) error {
	if len(f) == 0 || len(f) > 4096 {
		return errorText("a seccomp filter of " + itoa(len(f)) + " instructions")
	}
	prog := make([]unix.SockFilter, len(f))
	for i, in := range f {
		prog[i] = unix.SockFilter{Code: in.Code, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return wrap("load a seccomp filter", e)
	}
	return nil
}
