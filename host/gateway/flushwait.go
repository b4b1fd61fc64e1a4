package gateway

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// A call's progress notifications are written to the client before its
// result. mcp-go v1.2.1's streamable HTTP server queues a request's
// notifications for a goroutine that writes them; when the handler returns,
// it drains the queue and writes the result, but a notification that the
// goroutine had already taken off the queue and that lost the race for the
// stream's lock is dropped (measured: the last of three progress
// notifications lost in 1 of 6 runs with the machine busy). So each POST's
// writer counts its flushes (every notification the goroutine writes ends
// with one), and a call that relayed progress waits, before it returns its
// result, until as many flushes as notifications it queued have happened.

// flushes is a POST's response writer that counts its flushes.
type flushes struct {
	http.ResponseWriter
	mu      sync.Mutex
	flushed int
	queued  int
	change  chan struct{} // closed and replaced at each flush
}

type flushesKey struct{}

// countFlushes wraps w for the request r carries, which it returns with
// the counter in its context.
func countFlushes(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	if _, ok := w.(http.Flusher); !ok || r.Method != http.MethodPost {
		return w, r
	}
	f := &flushes{ResponseWriter: w, change: make(chan struct{})}
	return f, r.WithContext(context.WithValue(r.Context(), flushesKey{}, f))
}

// Flush flushes the response and counts it.
func (f *flushes) Flush() {
	f.ResponseWriter.(http.Flusher).Flush()
	f.mu.Lock()
	f.flushed++
	close(f.change)
	f.change = make(chan struct{})
	f.mu.Unlock()
}

// Unwrap gives http.ResponseController the writer underneath.
func (f *flushes) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// flushesOf is the counter of the request ctx belongs to, or nil.
func flushesOf(ctx context.Context) *flushes {
	f, _ := ctx.Value(flushesKey{}).(*flushes)
	return f
}

// queue counts one notification queued for the client.
func (f *flushes) queue() {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.queued++
	f.mu.Unlock()
}

// maxFlushWait bounds how long a result waits for its notifications to be
// written: a client that stopped reading must not hold the call.
const maxFlushWait = 2 * time.Second

// written waits until every notification queued so far has been flushed,
// ctx ends, or maxFlushWait passes.
func (f *flushes) written(ctx context.Context) {
	if f == nil {
		return
	}
	timer := time.NewTimer(maxFlushWait)
	defer timer.Stop()
	for {
		f.mu.Lock()
		done, change := f.flushed >= f.queued, f.change
		f.mu.Unlock()
		if done {
			return
		}
		select {
		case <-change:
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		}
	}
}
