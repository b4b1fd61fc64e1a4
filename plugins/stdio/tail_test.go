package main

import "testing"

// The tail keeps the last line that reports a refused operation, which a
// sandboxed server that fails of it usually follows with more lines.
func TestTailKeepsTheDenial(t *testing.T) {
	tl := &lineTail{max: 3}
	tl.Write([]byte("npm error code EACCES\nnpm error path /home/u/.npm/_cacache\nnpm error A complete log of this run can be found in: x\n"))
	if got := tl.denied(); got != "npm error code EACCES" {
		t.Errorf("denied = %q", got)
	}
	if got := tl.last(); got != "npm error A complete log of this run can be found in: x" {
		t.Errorf("last = %q", got)
	}
	other := &lineTail{max: 3}
	other.Write([]byte("listening\nbye\n"))
	if got := other.denied(); got != "" {
		t.Errorf("a tail without a denial reports %q", got)
	}
}
