package main

import (
	"fmt"
	"runtime/debug"
	"syscall"
)

// socket32 is socket(2) through the i386 system call ABI: the descriptor,
// or minus the errno.
func socket32(domain, typ, proto uint32) int32

// udpSocket32 makes a UDP socket through the 32-bit system call ABI. A
// kernel without IA32 emulation faults on int $0x80; that is an error
// saying so, not a crash.
func udpSocket32() (fd int, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			fd, err = -1, fmt.Errorf("no 32-bit system call ABI here: int $0x80 faulted (%v)", r)
		}
	}()
	r := socket32(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if r < 0 {
		return -1, syscall.Errno(-r)
	}
	return int(r), nil
}
