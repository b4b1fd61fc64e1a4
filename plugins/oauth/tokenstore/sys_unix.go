//go:build unix

package tokenstore

import (
	"errors"
	"os"
	"syscall"
)

// Open flags: a credential path that is a symbolic link is not followed,
// and opening a FIFO planted there does not block.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonblock = syscall.O_NONBLOCK
)

// fileIdentity returns the device and inode of fi.
func fileIdentity(fi os.FileInfo) (dev, ino uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return uint64(st.Dev), uint64(st.Ino) // the field types differ between systems
}

// syncDir flushes dir's entries (a rename or a removal) to disk. A file
// system that cannot sync a directory (EINVAL) is not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) {
		return nil
	}
	return err
}
