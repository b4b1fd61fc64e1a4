package main

import (
	"bytes"
	"strings"
	"sync"
)

// lineTail keeps the last lines written to it (the server's stderr), for
// error messages.
type lineTail struct {
	mu      sync.Mutex
	max     int
	lines   []string
	partial []byte
	// denial is the last line that reports a refused file or socket
	// operation (see deniedLine).
	denial string
}

// denialWords are what a line says when the kernel refused the server an
// operation: the errno names and the C library's texts for them. A
// sandboxed server that fails on one usually goes on to print more (npm
// its log file's name), so its last line does not say what went wrong.
var denialWords = []string{"eacces", "eperm", "erofs", "permission denied", "operation not permitted", "read-only file system"}

// deniedLine reports whether line reports a refused operation.
func deniedLine(line string) bool {
	l := strings.ToLower(line)
	for _, w := range denialWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

func (t *lineTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(t.partial[:i]))
		t.partial = t.partial[i+1:]
		if line == "" {
			continue
		}
		if len(line) > 300 {
			line = line[:300] + "..."
		}
		t.lines = append(t.lines, line)
		if deniedLine(line) {
			t.denial = line
		}
		if len(t.lines) > t.max {
			t.lines = t.lines[len(t.lines)-t.max:]
		}
	}
	if len(t.partial) > 4096 {
		t.partial = t.partial[len(t.partial)-4096:]
	}
	return len(p), nil
}

// last returns the last non-empty line, including an unterminated one.
func (t *lineTail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := strings.TrimSpace(string(t.partial)); p != "" {
		return p
	}
	if len(t.lines) == 0 {
		return ""
	}
	return t.lines[len(t.lines)-1]
}

// denied returns the last line that reported a refused operation, or "".
func (t *lineTail) denied() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.denial
}
