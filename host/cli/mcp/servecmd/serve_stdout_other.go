//go:build !unix

package servecmd

import (
	"errors"
	"os"
)

// divertStdout is not available here: the protocol uses stdout as it is.
func divertStdout() (*os.File, func(), error) {
	return nil, nil, errors.New("not supported")
}
