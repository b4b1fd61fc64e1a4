//go:build linux && race

package rawio

import "syscall"

// With the race detector, reads and writes go through package syscall,
// which tells the detector that what one goroutine wrote to a descriptor
// happens before another goroutine reads it (raw system calls would hide
// that, and a test that passes data through a socket to itself would see
// races that are not there). Speed does not matter in such builds.

func sysRead(fd uintptr, p []byte) (uintptr, syscall.Errno) {
	n, err := syscall.Read(int(fd), p)
	return retval(n, err)
}

func sysWrite(fd uintptr, p []byte) (uintptr, syscall.Errno) {
	n, err := syscall.Write(int(fd), p)
	return retval(n, err)
}

func retval(n int, err error) (uintptr, syscall.Errno) {
	if err != nil {
		if e, ok := err.(syscall.Errno); ok {
			return 0, e
		}
		return 0, syscall.EIO
	}
	return uintptr(n), 0
}
