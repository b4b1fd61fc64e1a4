package config

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/hermes-agent/hermes/host/atomicfile"
)

// beforeRename, when set (by tests), runs after the temporary file is written
// and before it replaces the target; an error aborts the write.
var beforeRename func(tmp string) error

// withLock runs fn while holding the lock every hermes process takes to
// change path (atomicfile.WithLock).
func withLock(path string, fn func() error) error { return atomicfile.WithLock(path, fn) }

// writeAtomic replaces path with data whole or not at all
// (atomicfile.Write); check, when not nil, vets the temporary file before
// it replaces path (the ownership and mode refusal of config.yaml and .env).
func writeAtomic(path string, data []byte, perm fs.FileMode, check func(f *os.File, path string) error) error {
	return atomicfile.Write(path, data, perm, func(f *os.File, target string) error {
		if check != nil {
			if err := check(f, target); err != nil {
				return err
			}
		}
		if beforeRename != nil {
			if err := beforeRename(f.Name()); err != nil {
				return fmt.Errorf("write %s: %w", target, err)
			}
		}
		return nil
	})
}
