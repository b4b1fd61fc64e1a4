// Package testlog holds what tests use to read the host's log: a buffer
// that a logger writes to from many goroutines while a test reads it. Test
// code only.
package testlog

import (
	"bytes"
	"sync"
)

// Buffer collects log output; safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
