//go:build !linux

package main

// Elsewhere than on Linux there is no child subreaper: a server's own
// process group is all the plugin can stop.

func becomeSubreaper() error { return nil }

func killOrphans() int { return 0 }

func awaitExit(int) {}
