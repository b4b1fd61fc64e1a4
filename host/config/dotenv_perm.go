package config

import (
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// DotEnvWarning checks that <home>/.env (the file a symlink points at),
// which hermes uses, is also unreadable by others: it returns "" when it
// is, or is missing, or is refused anyway (someone else could have changed
// it, see UnsafeFileError: reading it fails with its own one line), and
// otherwise one line naming the file and the command that fixes it. hermes
// still reads a .env that only its group or other users can read (refusing
// would break a working setup for a leak the user can see and fix);
// SetDotEnv makes it private when it writes it.
func DotEnvWarning(home string) string {
	path := homedir.Dir(home).DotEnv()
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() && st.Uid != 0 {
		return ""
	}
	perm := fi.Mode().Perm()
	if perm&0o022 != 0 || perm&0o044 == 0 {
		return ""
	}
	who := "other users"
	if perm&0o004 == 0 {
		who = "its group"
	}
	return fmt.Sprintf("%s holds secrets but is readable by %s (mode %04o); run: chmod 600 %s", path, who, perm, path)
}

// userName is the login name of uid, or the number when it has none.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return u.Username
	}
	return strconv.Itoa(uid)
}

// checkPrivate fails when the file f, just made 0600, still grants access
// to others: a file system that ignores permissions (some mounts of FAT or
// network shares) cannot keep secrets from other users.
func checkPrivate(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("check mode of %s: %w", path, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s cannot be made private: the file system keeps it at mode %04o after chmod 600, so other users could read its secrets; nothing was written. Put HERMES_HOME on a file system that keeps permissions", path, perm)
	}
	return nil
}
