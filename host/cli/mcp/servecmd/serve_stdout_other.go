//go:build !unix

package servecmd

import (
	"errors"
	"os"
)

// DivertStdout is not available here: the protocol uses stdout as it is.
func DivertStdout() (*os.File, func(), error) {
	return nil, nil, errors.New("not supported")
}
