package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"
)

// beforeRename, when set (by tests), runs after the temporary file is written
// and synced and before it replaces the target; an error aborts the write.
var beforeRename func(tmp string) error

// withLock runs fn while holding an exclusive lock on path+".lock". The lock
// is a sibling file so that the locked file itself can be replaced by rename.
func withLock(path string, fn func() error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create folder for %s: %w", path, err)
	}
	lk := flock.New(path + ".lock")
	if err := lk.Lock(); err != nil {
		return fmt.Errorf("lock %s: %w; check that the folder is writable", path+".lock", err)
	}
	defer lk.Unlock()
	return fn()
}

// resolveTarget follows a symlinked path so that an atomic replace updates the
// file the link points at instead of replacing the link.
func resolveTarget(path string) string {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return real
		}
	}
	return path
}

// writeAtomic replaces path with data: a temporary file in the same folder is
// written, synced, given mode perm and renamed over path; then the folder is
// synced. check, when not nil, vets the temporary file before it replaces
// path. On any error the temporary file is removed and path is untouched.
func writeAtomic(path string, data []byte, perm fs.FileMode, check func(f *os.File, path string) error) (err error) {
	path = resolveTarget(path)
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Chmod(perm); err != nil {
		return fmt.Errorf("set mode of %s: %w", path, err)
	}
	if check != nil {
		if err = check(tmp, path); err != nil {
			return err
		}
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if beforeRename != nil {
		if err = beforeRename(name); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err = os.Rename(name, path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		// Best effort: some file systems refuse to sync a folder.
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// UpdateFile changes a small state file of the host's own (not config.yaml)
// safely against other hermes processes: under the file's lock it reads the
// current content (nil when the file does not exist; at most maxBytes, or
// the file is treated as absent), calls change, and atomically replaces the
// file with what change returns, mode 0600. change returning nil content
// leaves the file as it is.
func UpdateFile(path string, maxBytes int64, change func(old []byte) ([]byte, error)) error {
	return withLock(path, func() error {
		old, err := ReadSmallFile(path, maxBytes)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			old = nil
		}
		next, err := change(old)
		if err != nil || next == nil {
			return err
		}
		return writeAtomic(path, next, 0o600, nil)
	})
}

// ReadSmallFile reads a state file of at most maxBytes; a larger one is an
// error naming the bound.
func ReadSmallFile(path string, maxBytes int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > maxBytes {
		return nil, fmt.Errorf("%s is over %d bytes; delete it (hermes rebuilds it)", path, maxBytes)
	}
	return b, nil
}
