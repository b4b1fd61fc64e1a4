// Package atomicfile owns how hermes replaces a file of its own or of the
// user's (config.yaml, .env, state files, an install's journal) so that two
// hermes processes cannot lose each other's changes and a crash never
// leaves a half-written file: Write replaces a file whole or not at all (a
// temporary file in the same folder, written, given its mode, synced,
// renamed over the target, the folder synced), and WithLock serialises the
// read-change-write of one file across processes with an exclusive lock on
// a sibling file. It does not decide what a file holds, nor who may own it:
// the caller's check does.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"
)

// LockPath is the sibling file WithLock locks for path: a file of its own,
// so that path itself can be replaced by rename while the lock is held.
func LockPath(path string) string { return path + ".lock" }

// WithLock runs fn while holding an exclusive lock on LockPath(path),
// creating path's folder (0700) when it is missing. Every hermes process
// that changes path takes this lock first.
func WithLock(path string, fn func() error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create folder for %s: %w", path, err)
	}
	lk := flock.New(LockPath(path))
	if err := lk.Lock(); err != nil {
		return fmt.Errorf("lock %s: %w; check that the folder is writable", LockPath(path), err)
	}
	defer lk.Unlock()
	return fn()
}

// Target follows a symlinked path, so that replacing it updates the file
// the link points at (a config kept in a dotfiles repository) instead of
// replacing the link.
func Target(path string) string {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return real
		}
	}
	return path
}

// Check vets the temporary file (open, written, given its mode) before it
// replaces target; an error aborts the write and is returned as it is.
type Check func(tmp *os.File, target string) error

// Write replaces path (Target(path) when it is a symlink) with data: a
// temporary file in the same folder is written, given mode perm, vetted by
// check (when not nil), synced and renamed over the target; then the folder
// is synced. On any error the temporary file is removed and the target is
// untouched.
func Write(path string, data []byte, perm fs.FileMode, check Check) (err error) {
	path = Target(path)
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
	if err = os.Rename(name, path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	SyncDir(dir)
	return nil
}

// SyncDir makes a rename in dir durable (best effort: some file systems
// refuse to sync a folder).
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// Update changes a small state file of the host's own (not config.yaml)
// safely against other hermes processes: under the file's lock it reads the
// current content (nil when the file does not exist or is unreadable or
// over maxBytes), calls change, and replaces the file with what change
// returns, mode 0600. change returning nil content leaves the file as it
// is.
func Update(path string, maxBytes int64, change func(old []byte) ([]byte, error)) error {
	return WithLock(path, func() error {
		old, err := ReadSmall(path, maxBytes)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			old = nil
		}
		next, err := change(old)
		if err != nil || next == nil {
			return err
		}
		return Write(path, next, 0o600, nil)
	})
}

// ReadSmall reads a state file of at most maxBytes; a larger one is an
// error naming the bound.
func ReadSmall(path string, maxBytes int64) ([]byte, error) {
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
