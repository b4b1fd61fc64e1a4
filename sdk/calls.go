package sdk

import (
	"context"
	"sync"
	"time"
)

// Calls tracks the contexts of a plugin's calls in flight: net/rpc carries
// no context, so a kind package rebuilds one per call from the deadline the
// host sends, and the host cancels it by the call's id. The zero value is
// ready to use.
type Calls struct {
	mu sync.Mutex
	m  map[uint64]context.CancelFunc
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
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		delete(c.m, id)
		c.mu.Unlock()
		cancel()
	}
}

// Cancel ends the context of call id, if it is still running.
func (c *Calls) Cancel(id uint64) {
	c.mu.Lock()
	cancel := c.m[id]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// CancelAll ends every call in flight: the plugin is stopping.
func (c *Calls) CancelAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cancel := range c.m {
		cancel()
	}
}
