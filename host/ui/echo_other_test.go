//go:build unix && !linux

package ui

import (
	"os"
	"testing"
)

// echoOn is only checked on Linux.
func echoOn(*testing.T, *os.File) bool { return true }
