//go:build !linux

package main

// closeInherited does nothing elsewhere than on Linux, where there is no
// /proc/self/fd to find what the plugin inherited: a server may then get
// what hermes's caller left open.
func closeInherited() {}
