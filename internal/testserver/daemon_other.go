//go:build !unix

package testserver

import "errors"

func startDaemon(string) error { return errors.New("--daemon needs a Unix system") }

func daemonFork(string) int { return 1 }

func daemonRun(string) int { return 1 }
