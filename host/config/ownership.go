package config

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// UnsafeFileError is config.yaml or .env refused because someone else
// could have changed it: it belongs to a user other than the one running
// hermes (root's files excepted), or its group or other users may write
// it. Whoever can change config.yaml decides what hermes runs, and whoever
// can change .env what it sends, so hermes does not use such a file, as
// OpenSSH refuses its own files for the same reasons. The file is left as
// it is.
type UnsafeFileError struct {
	// Path is the file as hermes names it (a symlink is judged by the file
	// it leads to).
	Path string
	// Owner is the owner's uid and Mode the permission bits of the file
	// opened.
	Owner int
	Mode  fs.FileMode
	// Fix is the command that makes the file safe.
	Fix    string
	reason string
}

func (e *UnsafeFileError) Error() string {
	return fmt.Sprintf("%s %s, so hermes does not use it; check what it holds, then run: %s", e.Path, e.reason, e.Fix)
}

// checkTrusted refuses the opened file whose fstat is fi (so the very file
// that is read, whatever a path or symlink is changed to meanwhile) when someone other than the user running hermes could have changed it:
// owned by a uid other than the effective one and root's, or writable by
// its group or other users. secrets is true for .env: its fix also makes it
// unreadable by others (chmod 600). A file only others can read passes
// (for .env, DotEnvWarning says so).
func checkTrusted(fi fs.FileInfo, path string, secrets bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	perm, owner, euid := fi.Mode().Perm(), int(st.Uid), os.Geteuid()
	if (owner == euid || owner == 0) && perm&0o022 == 0 {
		return nil
	}
	e := &UnsafeFileError{Path: path, Owner: owner, Mode: perm}
	switch {
	case owner != euid && owner != 0:
		e.reason = fmt.Sprintf("belongs to %s, not to you (%s): its owner can change it", userName(owner), userName(euid))
		e.Fix = fmt.Sprintf("chown %s %s", userName(euid), path)
		if euid != 0 {
			e.Fix = "sudo " + e.Fix
		}
		switch {
		case secrets:
			e.Fix += " && chmod 600 " + path
		case perm&0o022 != 0:
			e.Fix += " && chmod go-w " + path
		}
	case perm&0o022 != 0:
		who := "its group"
		if perm&0o002 != 0 {
			who = "every user"
		}
		e.reason = fmt.Sprintf("is writable by %s (mode %04o): any of them can change it", who, perm)
		e.Fix = "chmod go-w " + path
		if secrets {
			e.Fix = "chmod 600 " + path
		}
	}
	return e
}
