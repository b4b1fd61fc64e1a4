//go:build !(linux && amd64)

package main

import (
	"errors"
	"runtime"
)

// udpSocket32 has no 32-bit system call ABI to go through here.
func udpSocket32() (int, error) {
	return -1, errors.New("no 32-bit system call ABI on " + runtime.GOOS + "/" + runtime.GOARCH)
}
