// Package testwait is the one way tests wait for something to happen that
// gives no signal of its own (a file appearing, a process ending, a
// counter at a server): poll the condition, bounded, and fail naming what
// never happened. Tests never sleep to order events. Test code only.
package testwait

import (
	"testing"
	"time"
)

// Interval is how often a condition is polled.
const Interval = 10 * time.Millisecond

// Until polls cond until it holds or limit passes, and reports whether it
// held.
func Until(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(Interval)
	}
	return true
}

// For waits until cond holds, failing the test with what after limit.
func For(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(limit, cond) {
		t.Fatalf("timed out after %s waiting for %s", limit, what)
	}
}
