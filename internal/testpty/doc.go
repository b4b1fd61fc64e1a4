// Package testpty runs code on a pseudo-terminal in tests and drives it the
// way a person at a terminal would: wait until some text shows, type keys,
// wait for the program to exit. It serves both a program started on the
// terminal (Start) and code in the test process that is handed the
// terminal's far end (Open), and it owns the one Timeout that every terminal
// test waits with. Waiting is driven by the terminal's output, never by
// sleeping. It belongs to tests only (Unix); nothing in a shipped binary
// imports it.
package testpty
