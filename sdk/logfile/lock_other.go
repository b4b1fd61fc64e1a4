//go:build !unix

package logfile

// lockFile is a no-op where flock does not exist: rotation there is
// not coordinated between processes (each still bounds its own writes).
func lockFile(string) (func(), error) { return func() {}, nil }
