package ui

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// echoOn reports whether the terminal echoes input.
func echoOn(t *testing.T, tty *os.File) bool {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag&unix.ECHO != 0
}
