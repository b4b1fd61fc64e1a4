package project

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/hermes-agent/hermes/host/config"
)

// readUntrusted reads a project file of at most limit bytes. It opens the
// file without following a symbolic link and without waiting on a FIFO,
// and refuses anything but a regular file: a repository decides what its
// files are.
func readUntrusted(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if isNotExist(err) {
			return nil, err
		}
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("project file %s %w (%s); replace it with the file itself", path, errNotRegular, kindOf(fi.Mode()))
		}
		return nil, fmt.Errorf("read project file %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read project file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("project file %s %w (%s); replace it with the file itself", path, errNotRegular, kindOf(fi.Mode()))
	}
	if fi.Size() > limit {
		return nil, &config.TooLargeError{Path: path, Size: fi.Size(), Limit: limit}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read project file %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, &config.TooLargeError{Path: path, Size: limit + 1, Limit: limit}
	}
	return data, nil
}

// kindOf names a file type for a person.
func kindOf(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a folder"
	}
	return "not a plain file"
}
