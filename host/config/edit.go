package config

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"io/fs"
	"os"
)

// Edit opens <home>/config.yaml for editing: it takes an exclusive lock
// (<home>/config.yaml.lock) for the whole read-modify-write, parses the file,
// calls fn, and when fn returns nil and changed the document, replaces the
// file atomically (same folder temp file, fsync, rename, folder fsync),
// keeping the old file's mode (0600 for a new file). A missing file (and
// home folder, created 0700) starts as an empty document. A file that does
// not parse is never written: Edit returns a *ParseError naming the line and
// column.
func Edit(home string, fn func(d *Document) error) error {
	path := homedir.Dir(home).Config()
	return withLock(path, func() error {
		mode := fs.FileMode(0o600)
		src, err := readLimited(path, MaxConfigBytes, false)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			src = nil
		case refusedFile(err):
			return err
		case err != nil:
			return fmt.Errorf("read %s: %w", path, err)
		default:
			if fi, err := os.Stat(path); err == nil {
				mode = fi.Mode().Perm()
			}
		}
		d, err := newDocument(path, src)
		if err != nil {
			return err
		}
		if err := fn(d); err != nil {
			return err
		}
		if bytes.Equal(d.src, src) && src != nil {
			return nil
		}
		if src == nil && len(d.src) == 0 {
			return nil
		}
		return writeAtomic(path, d.src, mode, nil)
	})
}
