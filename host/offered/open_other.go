//go:build !unix

package offered

import (
	"io/fs"
	"os"
)

// openRefusesLinks: openNoFollow follows links here; a read looks at the
// path (os.Lstat) before it opens it.
const openRefusesLinks = false

func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

func isLoop(error) bool { return false }

// fileOwner is unknown off unix: the folder's permissions guard the files.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }
