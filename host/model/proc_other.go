//go:build !unix

package model

import "os/exec"

// ownGroup does nothing where process groups are not unix's.
func ownGroup(*exec.Cmd) {}
