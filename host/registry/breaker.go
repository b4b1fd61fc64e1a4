package registry

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// breaker is a server's circuit breaker. After threshold consecutive failed
// calls it opens: calls fail fast for cooldown. Then one call goes through
// as a half-open probe (others keep failing fast while it runs); its
// success closes the breaker, its failure opens it again for another
// cooldown. A good reconnect closes it too.
type breaker struct {
	threshold int
	cooldown  time.Duration
	now       func() time.Time

	mu       sync.Mutex
	failures int
	openedAt time.Time
	probing  bool
}

func newBreaker(t Timings) *breaker {
	return &breaker{threshold: t.BreakerThreshold, cooldown: t.BreakerCooldown, now: t.Now}
}

// allow reports whether a call may go out. When it may not, it returns the
// number of consecutive failures and the time left until the probe.
// probe is true when this call is the half-open probe; the caller must then
// report its outcome with success or failure.
func (b *breaker) allow() (ok, probe bool, failures int, left time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failures < b.threshold {
		return true, false, 0, 0
	}
	left = b.cooldown - b.now().Sub(b.openedAt)
	if left > 0 || b.probing {
		return false, false, b.failures, max(left, 0)
	}
	b.probing = true
	return true, true, 0, 0
}

// success records a call that reached the server.
func (b *breaker) success() {
	b.mu.Lock()
	b.failures = 0
	b.probing = false
	b.mu.Unlock()
}

// failure records a failed call; reaching the threshold (or failing the
// probe) (re)opens the breaker.
func (b *breaker) failure() {
	b.mu.Lock()
	b.failures++
	b.probing = false
	if b.failures >= b.threshold {
		b.openedAt = b.now()
	}
	b.mu.Unlock()
}

// release ends a probe that says nothing about the server (the caller
// gave up); the next call may probe again.
func (b *breaker) release() {
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

// reset closes the breaker (after a good reconnect).
func (b *breaker) reset() { b.success() }

// breakerMessage is the error of a call refused by an open breaker
// (REFERENCE §4.5).
func breakerMessage(server string, failures int, left time.Duration) string {
	secs := int(math.Ceil(left.Seconds()))
	return fmt.Sprintf("MCP server '%s' is unreachable after %d consecutive failures. Auto-retry available in ~%ds. "+
		"Do NOT retry this tool yet — use alternative approaches or ask the user to check the MCP server.", server, failures, secs)
}
