//go:build !unix

package tokenstore

import "os"

// Without O_NOFOLLOW the symbolic-link check is the Lstat before each
// open and write.
const (
	oNoFollow = 0
	oNonblock = 0
)

// fileIdentity is unknown here: change detection uses size and mtime.
func fileIdentity(os.FileInfo) (dev, ino uint64) { return 0, 0 }

// syncDir is a no-op where directories cannot be synced.
func syncDir(string) error { return nil }
