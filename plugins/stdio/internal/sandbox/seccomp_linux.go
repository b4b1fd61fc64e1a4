package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompAvailable says why seccomp filters cannot be installed, or nil.
func seccompAvailable() error {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		return fmt.Errorf("no filter for %s", runtime.GOARCH)
	}
	action := uint32(unix.SECCOMP_RET_ERRNO)
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
	switch e {
	case 0:
		return nil
	case unix.ENOSYS, unix.EINVAL:
		return errors.New("seccomp filters are not built into this kernel")
	}
	return e
}

// errUnknownNetwork is the error for a network mode with no filter.
func errUnknownNetwork(net string) error {
	return fmt.Errorf("no seccomp filter for network mode %q", net)
}
