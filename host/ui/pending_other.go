//go:build !unix

package ui

import "time"

// inputPending cannot wait for terminal input here, so it assumes that the
// rest of an escape sequence follows. A lone ESC is then read together with
// the next key: ESC pressed twice, or ctrl-c, cancels a checklist.
func inputPending(int, time.Duration) bool { return true }
