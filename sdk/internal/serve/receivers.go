package serve

import (
	"context"
	"sync"
)

// Receivers are the RPC receivers a kind handed out (one per dispense),
// kept so that its Shutdown can close them. The zero value is ready.
type Receivers[T any] struct {
	mu   sync.Mutex
	list []T
}

// Add keeps r.
func (rs *Receivers[T]) Add(r T) {
	rs.mu.Lock()
	rs.list = append(rs.list, r)
	rs.mu.Unlock()
}

// CloseAll calls closeOne on every receiver, in the order they were added,
// and returns when all are closed or ctx ends, whichever is first (the
// closing goes on in the background).
func (rs *Receivers[T]) CloseAll(ctx context.Context, closeOne func(T)) {
	rs.mu.Lock()
	list := append([]T(nil), rs.list...)
	rs.mu.Unlock()
	done := make(chan struct{})
	go func() {
		for _, r := range list {
			closeOne(r)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
