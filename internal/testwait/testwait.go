// Package testwait is the one way tests wait for something to happen that
// gives no signal of its own (a file appearing, a process ending, a
// counter at a server): poll the condition, bounded, and fail naming what
// never happened. Tests never sleep to order events. Test code only.
package testwait

import (
	"context"
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

// MinLimit is the least For waits before it fails a test: a limit is how
// long a test may wait for something that does happen, and on a loaded
// machine (two cores, several test processes, -race) the short limits
// tests name are not enough. Waiting longer costs time only when the test
// fails anyway.
const MinLimit = time.Minute

// For waits until cond holds, failing the test with what after limit (at
// least MinLimit).
func For(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	limit = max(limit, MinLimit)
	if !Until(limit, cond) {
		t.Fatalf("timed out after %s waiting for %s", limit, what)
	}
}

// Context is the test's context (t.Context) ended a little before the
// test binary's -timeout (at nineteen twentieths of the time left), so a
// run bounded by it fails with what it printed rather than in the binary's
// stack dump. It bounds nothing else: without a -timeout it ends only with
// the test, and what a busy machine makes slow is waited for.
func Context(t testing.TB) context.Context {
	ctx := t.Context()
	deadline, ok := t.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return ctx
	}
	d, has := deadline.Deadline()
	if !has {
		return ctx
	}
	ctx, cancel := context.WithDeadline(ctx, time.Now().Add(time.Until(d)*19/20))
	t.Cleanup(cancel)
	return ctx
}
