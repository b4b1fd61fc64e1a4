//go:build !linux

package main

// playRole plays nothing: the roles are for the Linux subreaper tests.
func playRole() {}
