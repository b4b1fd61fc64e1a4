package cmdkit

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

// ExitError carries an exit code through urfave/cli.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// Failf is a one-line failure (exit 1).
func Failf(format string, args ...any) error {
	return &ExitError{Code: ExitFail, Msg: fmt.Sprintf(format, args...)}
}

// Usagef is a usage error (exit 2).
func Usagef(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Msg: fmt.Sprintf(format, args...)}
}

// OneLine is s on one line, its runs of white space made one space.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
