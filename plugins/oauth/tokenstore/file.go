package tokenstore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MaxFileSize bounds every read: a credential file over 1 MiB is not read
// (it reads as corrupt, wrapping ErrTooLarge).
const MaxFileSize = 1 << 20

// Errors the store's errors wrap; test them with errors.Is. Each error also
// names the file, never its contents.
var (
	// ErrCorrupt: the file is not a credential file (not JSON, wrong field
	// types, missing access_token or client_id, over MaxFileSize, not a
	// regular file). The Load functions then return no value; the file is
	// left in place.
	ErrCorrupt = errors.New("corrupt credential file")

	// ErrTooLarge: the file is over MaxFileSize (also ErrCorrupt).
	ErrTooLarge = errors.New("file is over the 1 MiB size limit")

	// ErrSymlink: the credential path is a symbolic link. It is neither
	// followed when reading nor replaced when writing: another process
	// must not redirect Hermes' reads or writes.
	ErrSymlink = errors.New("is a symbolic link; refusing to follow it")
)

func corruptError(path, problem string) error {
	return fmt.Errorf("tokenstore: %s: %w: %s", path, ErrCorrupt, problem)
}

func symlinkError(path string) error {
	return fmt.Errorf("tokenstore: %s %w", path, ErrSymlink)
}

// isSymlink reports whether path itself is a symbolic link.
func isSymlink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// readFile reads a credential file without following a symbolic link, at
// most MaxFileSize bytes. A missing file returns (nil, nil, nil). The
// FileInfo, when not nil, is the file read (or the link refused), for
// change detection and a legacy file's mtime.
func readFile(path string) ([]byte, os.FileInfo, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fi, symlinkError(path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonblock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		if isSymlink(path) { // planted between the Lstat and the open
			return nil, nil, symlinkError(path)
		}
		return nil, nil, fmt.Errorf("tokenstore: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("tokenstore: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fi, corruptError(path, "not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fi, fmt.Errorf("tokenstore: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, fi, fmt.Errorf("tokenstore: %s: %w: %w", path, ErrCorrupt, ErrTooLarge)
	}
	return data, fi, nil
}

// ensureDir creates dir 0700, or tightens it to 0700 when group or others
// have any access. A dir that is a symbolic link is followed: users may
// keep $HERMES_HOME elsewhere.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("tokenstore: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("tokenstore: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("tokenstore: %s is not a folder", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("tokenstore: tighten folder: %w", err)
		}
	}
	return nil
}

// tempSuffix returns ".tmp.<pid>.<8 hex digits>".
func tempSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	return fmt.Sprintf(".tmp.%d.%s", os.Getpid(), hex.EncodeToString(b[:]))
}

// writeFile replaces path with data atomically: a new temp file
// <path>.tmp.<pid>.<8hex> (O_CREAT|O_EXCL, 0600), write, fsync, rename over
// path, fsync the folder. A reader sees the old file or the new one, never
// a part. A symbolic link at path is refused (rename would replace the
// link, not write through it, but its presence means someone is
// tampering). It returns the written file's info, for change detection.
func writeFile(path string, data []byte) (os.FileInfo, error) {
	tmp, fi, err := writeTemp(path, data)
	if err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("tokenstore: write %s: %w", path, unwrapPath(err))
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fi, fmt.Errorf("tokenstore: sync folder %s: %w", filepath.Dir(path), unwrapPath(err))
	}
	return fi, nil
}

// writeTemp writes data to a new temp file beside path,
// <path>.tmp.<pid>.<8hex> (O_CREAT|O_EXCL, 0600, fsynced), and returns its
// name and info; the caller renames or links it into place. A symbolic
// link at path is refused.
func writeTemp(path string, data []byte) (string, os.FileInfo, error) {
	if err := ensureDir(filepath.Dir(path)); err != nil {
		return "", nil, err
	}
	if isSymlink(path) {
		return "", nil, symlinkError(path)
	}
	tmp := path + tempSuffix()
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		return "", nil, fmt.Errorf("tokenstore: %w", err)
	}
	fi, err := func() (os.FileInfo, error) {
		defer f.Close()
		if err := f.Chmod(0o600); err != nil { // whatever the umask
			return nil, err
		}
		if _, err := f.Write(data); err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		return fi, f.Close()
	}()
	if err != nil {
		_ = os.Remove(tmp)
		return "", nil, fmt.Errorf("tokenstore: write %s: %w", path, unwrapPath(err))
	}
	return tmp, fi, nil
}

// unwrapPath drops the path of an *fs.PathError or *os.LinkError (the
// caller names the file itself).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
