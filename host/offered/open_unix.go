//go:build unix

package offered

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// openRefusesLinks: openNoFollow refuses a final symbolic link itself
// (isLoop), so a read needs no look at the path before it opens it.
const openRefusesLinks = true

// openNoFollow opens path for reading without following a final symbolic
// link (nor blocking on a FIFO).
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// isLoop reports whether err is O_NOFOLLOW refusing a symbolic link.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) }

// fileOwner returns the uid owning fi.
func fileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
