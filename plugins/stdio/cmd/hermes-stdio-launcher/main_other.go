//go:build !linux

package main

// Elsewhere than on Linux the plugin starts servers directly and never runs
// its launcher.

import "os"

func main() {
	os.Stderr.WriteString("hermes-stdio-launcher runs only on Linux\n")
	os.Exit(2)
}
