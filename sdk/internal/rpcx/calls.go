package rpcx

import (
	"context"
	"sync"
	"time"
)

// maxEarly bounds the ids of calls cancelled before they began that are
// remembered.
const maxEarly = 1024

// Calls tracks the contexts of a callee's calls in flight: net/rpc carries
// no context, so the callee rebuilds one per call from the deadline the
// caller sends, and the caller cancels it by the call's id. net/rpc serves
// calls concurrently, so a cancel may overtake its call: the id is
// remembered and the call begins cancelled. The zero value is ready to use.
type Calls struct {
	mu    sync.Mutex
	m     map[uint64]context.CancelFunc
	early map[uint64]bool
}

// Begin returns the context of call id, ending at deadline (none when
// zero), and the function that ends the call; call it when the call
// returns.
func (c *Calls) Begin(id uint64, deadline time.Time) (context.Context, func()) {
	var ctx context.Context
	var cancel context.CancelFunc
	if deadline.IsZero() {
		ctx, cancel = context.WithCancel(context.Background())
	} else {
		ctx, cancel = context.WithDeadline(context.Background(), deadline)
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[uint64]context.CancelFunc{}
	}
	c.m[id] = cancel
	if c.early[id] {
		delete(c.early, id)
		cancel()
	}
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		delete(c.m, id)
		c.mu.Unlock()
		cancel()
	}
}

// Cancel ends the context of call id, if it is still running, or makes it
// begin cancelled if it has not begun yet.
func (c *Calls) Cancel(id uint64) {
	c.mu.Lock()
	cancel := c.m[id]
	if cancel == nil {
		if c.early == nil {
			c.early = map[uint64]bool{}
		}
		if len(c.early) < maxEarly {
			c.early[id] = true
		}
	}
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// CancelAll ends every call in flight: the callee is stopping.
func (c *Calls) CancelAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cancel := range c.m {
		cancel()
	}
}
