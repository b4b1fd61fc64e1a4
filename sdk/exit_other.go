//go:build !unix

package sdk

import (
	"fmt"
	"os"
)

// ExitReason describes how a process ended, for error messages: "exited
// with status 3".
func ExitReason(ps *os.ProcessState) string {
	if ps == nil {
		return "ended"
	}
	return fmt.Sprintf("exited with status %d", ps.ExitCode())
}
