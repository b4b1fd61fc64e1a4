package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// rotatingFile is an append-only file rotated by size: past maxBytes the
// file becomes path.1, path.1 becomes path.2, and so on up to path.keep;
// the oldest is removed. Rotation happens in the write that needs it,
// under the Log's lock, so when a write returns the files on disk are
// what this comment says (no background pruning to wait for).
//
// It is written here rather than taken from gopkg.in/natefinch/lumberjack.v2:
// that library prunes old files in a goroutine of its own, which Close
// does not stop and a caller cannot wait for, and sizes its files in whole
// megabytes only.
type rotatingFile struct {
	path     string
	maxBytes int64
	keep     int
	f        *os.File
	size     int64
}

func openRotating(path string, maxBytes int64, keep int) (*rotatingFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit: create the folder of %s: %w", path, err)
	}
	r := &rotatingFile{path: path, maxBytes: maxBytes, keep: keep}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *rotatingFile) open() error {
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit: open %s: %w", r.path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit: %s: %w", r.path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("audit: %s is not a regular file", r.path)
	}
	r.f, r.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past its
// size; a line longer than the size still goes whole into a new file.
func (r *rotatingFile) Write(p []byte) (int, error) {
	if r.f == nil {
		return 0, fmt.Errorf("audit: %s is closed", r.path)
	}
	if r.size > 0 && r.size+int64(len(p)) > r.maxBytes {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

func (r *rotatingFile) backup(i int) string { return r.path + "." + strconv.Itoa(i) }

// rotate moves the files one place on and opens a new, empty file.
func (r *rotatingFile) rotate() error {
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("audit: close %s: %w", r.path, err)
	}
	r.f = nil
	if r.keep == 0 {
		if err := os.Remove(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("audit: rotate %s: %w", r.path, err)
		}
		return r.open()
	}
	if err := os.Remove(r.backup(r.keep)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("audit: rotate %s: %w", r.path, err)
	}
	for i := r.keep - 1; i >= 1; i-- {
		if err := os.Rename(r.backup(i), r.backup(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("audit: rotate %s: %w", r.path, err)
		}
	}
	if err := os.Rename(r.path, r.backup(1)); err != nil {
		return fmt.Errorf("audit: rotate %s: %w", r.path, err)
	}
	return r.open()
}

func (r *rotatingFile) close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
