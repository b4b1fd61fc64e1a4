package cli

import (
	"fmt"
	"strings"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitFail  = 1
	ExitUsage = 2
)

// exitError carries an exit code through urfave/cli.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// failf is a one-line failure (exit 1).
func failf(format string, args ...any) error {
	return &exitError{code: ExitFail, msg: fmt.Sprintf(format, args...)}
}

// usagef is a usage error (exit 2).
func usagef(format string, args ...any) error {
	return &exitError{code: ExitUsage, msg: fmt.Sprintf(format, args...)}
}

// oneLine is s on one line, its runs of white space made one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
