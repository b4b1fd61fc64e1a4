//go:build linux && !race

package rawio

import (
	"syscall"
	"unsafe"
)

// sysRead is read(2) without the scheduler's system-call bookkeeping.
func sysRead(fd uintptr, p []byte) (uintptr, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return n, e
}

// sysWrite is write(2) without the scheduler's system-call bookkeeping.
func sysWrite(fd uintptr, p []byte) (uintptr, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return n, e
}
