// Package logfile writes log files that a noisy or hostile source cannot
// grow without bound: File rotates by size, Limiter and LineWriter pass at
// most a steady number of lines a second per source and say how many they
// dropped.
//
// Several processes may append to one file at once (every plugin of a host
// writes the same server log): each write is one append, and rotation is
// done by one process at a time under a lock file beside the log, so no
// line is written into a file that was already rotated away for long, and
// the total kept on disk stays near MaxBytes × (Backups+1).
//
// The package depends on the standard library only, so plugins and the
// host can both use it.
package logfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Defaults of Options.
const (
	// DefaultMaxBytes is the size at which a log file is rotated (10 MiB).
	DefaultMaxBytes = 10 << 20
	// DefaultBackups is how many rotated files are kept besides the
	// current one: <path>.1 (the newest) to <path>.3.
	DefaultBackups = 3
	// maxStatEvery bounds how many bytes of its own writes a File lets
	// pass before it reads the file's real size again (other processes
	// write to it too); it is also at most a sixteenth of MaxBytes, so a
	// shared file overshoots MaxBytes by little.
	maxStatEvery = 64 << 10
)

// Options configure a File. Zero fields take their defaults.
type Options struct {
	// MaxBytes is the size past which the file is rotated before the next
	// write (DefaultMaxBytes).
	MaxBytes int64
	// Backups is how many rotated files are kept (DefaultBackups).
	Backups int
	// Mode is the mode of a new file (0600).
	Mode os.FileMode
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Backups <= 0 {
		o.Backups = DefaultBackups
	}
	if o.Mode == 0 {
		o.Mode = 0o600
	}
	return o
}

// File is a log file opened for appending that rotates itself by size:
// when a write would take it past MaxBytes, <path> becomes <path>.1, the
// older backups move up one, the oldest beyond Backups is deleted, and a
// new <path> is started. It is safe for concurrent use.
type File struct {
	path string
	opts Options

	mu       sync.Mutex
	f        *os.File
	size     int64 // the file's size as last known
	unstated int64 // bytes written since size was read from the file
}

// Open opens (creating it and its folder, 0700, when missing) the log
// file at path for appending.
func Open(path string, opts Options) (*File, error) {
	l := &File{path: path, opts: opts.withDefaults()}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create folder for %s: %w", path, err)
	}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

// Path returns the file's path.
func (l *File) Path() string { return l.path }

func (l *File) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, l.opts.Mode)
	if err != nil {
		return err
	}
	l.f = f
	l.size, l.unstated = 0, 0
	if fi, err := f.Stat(); err == nil {
		l.size = fi.Size()
	}
	return nil
}

// Write appends p, rotating the file first when p would take it past
// MaxBytes (a file holding nothing yet takes p whatever its size).
func (l *File) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, os.ErrClosed
	}
	if l.unstated >= min(maxStatEvery, l.opts.MaxBytes/16) {
		if fi, err := l.f.Stat(); err == nil {
			l.size, l.unstated = fi.Size(), 0
		}
	}
	if l.size > 0 && l.size+int64(len(p)) > l.opts.MaxBytes {
		// A failed rotation keeps logging into the file we have rather
		// than lose lines; the next write past the limit tries again.
		_ = l.rotate(int64(len(p)))
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	l.unstated += int64(n)
	return n, err
}

// rotate starts a new file, under the lock beside the log. When another
// process rotated since this one opened the file, it only follows to the
// new file (rotating again only if that one is full too).
func (l *File) rotate(next int64) error {
	unlock, err := lockFile(l.path + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := l.f.Stat()
	if err != nil {
		return err
	}
	onDisk, err := os.Stat(l.path)
	if err != nil || !os.SameFile(cur, onDisk) {
		// Rotated (or removed) by someone else: follow.
		l.f.Close()
		if err := l.open(); err != nil {
			return err
		}
		if l.size == 0 || l.size+next <= l.opts.MaxBytes {
			return nil
		}
	} else if onDisk.Size()+next <= l.opts.MaxBytes {
		// Others' writes were counted wrong the other way: not full yet.
		l.size = onDisk.Size()
		return nil
	}
	_ = os.Remove(l.backup(l.opts.Backups))
	for i := l.opts.Backups - 1; i >= 1; i-- {
		_ = os.Rename(l.backup(i), l.backup(i+1))
	}
	if err := os.Rename(l.path, l.backup(1)); err != nil {
		return err
	}
	l.f.Close()
	return l.open()
}

func (l *File) backup(i int) string { return l.path + "." + strconv.Itoa(i) }

// Close closes the file; later writes fail.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
