package launcher

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock through raw system calls on the calling thread only. The
// launcher executes the server from that same locked thread right after, and
// a restricted thread's domain is what execve hands on; so none of the
// all-threads machinery is needed (go-landlock's psx would make the plugin a
// cgo binary wherever cgo is enabled).

// LandlockABI returns the kernel's Landlock ABI version, or an error saying
// why there is none.
func LandlockABI() (int, error) {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch e {
	case 0:
		return int(v), nil
	case unix.ENOSYS:
		return 0, errors.New("not built into this kernel")
	case unix.EOPNOTSUPP:
		return 0, errors.New("disabled at boot; add landlock to the lsm= kernel parameter")
	}
	return 0, e
}

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
func landlockRestrict(abi int, rules []Rule, handleNet bool, connectPorts []int, scopeUnix bool) error {
	attr := rulesetAttr{handledFS: handledFS(abi)}
	if handleNet && abi >= ABINet {
		attr.handledNet = netBindTCP | netConnectTCP
	}
	if abi >= ABIScope {
		attr.scoped = scopeSignal
		if scopeUnix {
			attr.scoped |= scopeAbstractUnix
		}
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return fmt.Errorf("create the Landlock ruleset: %w", e)
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
				return fmt.Errorf("allow TCP port %d: %w", port, e)
			}
		}
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return fmt.Errorf("enforce the Landlock ruleset: %w", e)
	}
	return nil
}

// addPathRule adds one rule; a path that does not exist (any more) is
// skipped, since nothing there can be reached through it.
func addPathRule(rulesetFD int, r Rule, handled uint64) error {
	if r.Strict {
		return addStrictRule(rulesetFD, r, handled)
	}
	flags := unix.O_PATH | unix.O_CLOEXEC
	if r.NoFollow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(r.Path, flags, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			return nil
		}
		return fmt.Errorf("open %s for a Landlock rule: %w", r.Path, err)
	}
	defer unix.Close(fd)
	return addRuleFD(rulesetFD, fd, r, handled)
}

// addStrictRule adds the rule of a path resolved when the plan was made: no
// symbolic link may lie anywhere on the way (openat2 RESOLVE_NO_SYMLINKS),
// and the path must be the object the plan names.
func addStrictRule(rulesetFD int, r Rule, handled uint64) error {
	fd, err := unix.Openat2(unix.AT_FDCWD, r.Path, &unix.OpenHow{
		Flags: unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if errors.Is(err, unix.ENOENT) {
		return nil // removed since: nothing to grant
	}
	if err != nil {
		return fmt.Errorf("open %s for a Landlock rule without following links: %w (a symbolic link replaced part of it since the plan was made)", r.Path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s for a Landlock rule: %w", r.Path, err)
	}
	if (r.Dev != 0 || r.Ino != 0) && (st.Dev != r.Dev || st.Ino != r.Ino) {
		return fmt.Errorf("%s was replaced since the plan was made; start the server again", r.Path)
	}
	return addRuleFD(rulesetFD, fd, r, handled)
}

// addRuleFD adds the rule of r on the object fd holds.
func addRuleFD(rulesetFD, fd int, r Rule, handled uint64) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s for a Landlock rule: %w", r.Path, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return nil // a link put there since the plan was made
	}
	access := r.Access & handled
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	if access == 0 {
		return nil
	}
	pb := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&pb)), 0, 0, 0); e != 0 {
		return fmt.Errorf("Landlock rule for %s: %w", r.Path, e)
	}
	return nil
}
