package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hermes-agent/hermes/host/config"
)

// WritableMode is the mode of a writable folder an install creates: the
// user's alone, as what a server keeps there (its data, npm's cache) is.
const WritableMode = 0o700

// writableDirs are the folders srv's sandbox declares writable, as the
// server will get them (~ and ${VAR}s resolved against the values just
// asked for). srv is the entry with its manifest's sandbox, whether or not
// the server runs sandboxed (--no-sandbox): a folder a server writes into
// must exist before it starts either way (the sandbox grants no folder
// that does not, and a server such as memory fails with ENOENT in one that
// is missing). The paths are checked first (CheckPaths): a writable path
// into $HERMES_HOME or through a link is refused, not made.
func writableDirs(name string, srv *config.Server, home, installDir string) ([]string, error) {
	sb := srv.Sandbox
	if sb == nil || len(sb.Writable) == 0 {
		return nil, nil
	}
	if err := sb.CheckPaths(home, installDir); err != nil {
		return nil, fmt.Errorf("the sandbox of '%s' is refused: %s; it was not installed", name, err)
	}
	return sb.Writable, nil
}

// makeWritable creates each folder of dirs that does not exist, with its
// missing parents, mode WritableMode (owned by the user hermes runs as).
// It returns the folders it created, parents first, so that an install
// that fails can take them away again (removeCreated).
func makeWritable(dirs []string) (created []string, err error) {
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return created, fmt.Errorf("writable folder %q is not an absolute path", d)
		}
		var missing []string
		for p := filepath.Clean(d); ; p = filepath.Dir(p) {
			fi, err := os.Lstat(p)
			if err == nil {
				if !fi.IsDir() {
					return created, fmt.Errorf("writable folder %s: %s is not a folder", d, p)
				}
				break
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return created, fmt.Errorf("writable folder %s: %w", d, err)
			}
			missing = append(missing, p)
			if p == filepath.Dir(p) {
				break
			}
		}
		for i := len(missing) - 1; i >= 0; i-- {
			// Mkdir, not MkdirAll: a folder someone else made in between
			// is theirs, not ours to take away.
			if err := os.Mkdir(missing[i], WritableMode); err != nil {
				return created, fmt.Errorf("create writable folder %s: %w", missing[i], err)
			}
			// The umask may have taken rights away; it cannot add any,
			// but make sure the folder is exactly the user's.
			if err := os.Chmod(missing[i], WritableMode); err != nil {
				return append(created, missing[i]), fmt.Errorf("create writable folder %s: %w", missing[i], err)
			}
			created = append(created, missing[i])
		}
	}
	return created, nil
}

// removeCreated takes away the folders makeWritable created, deepest
// first, as long as they are empty: what a server wrote into one while it
// was probed (npm's cache) stays, and so does the folder holding it. It
// returns the folders it had to keep.
func removeCreated(created []string) (kept []string) {
	for i := len(created) - 1; i >= 0; i-- {
		if err := os.Remove(created[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			kept = append(kept, created[i])
		}
	}
	return kept
}
