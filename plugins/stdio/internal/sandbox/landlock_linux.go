package sandbox

import (
	"errors"

	"golang.org/x/sys/unix"
)

// landlockABI returns the kernel's Landlock ABI version, or an error saying
// why there is none.
func landlockABI() (int, error) {
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
