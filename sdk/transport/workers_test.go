package transport

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"time"
)

// eventually waits, yielding, until cond holds; a minute is far more
// than any machine needs for what it waits on here.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !cond(); runtime.Gosched() {
		if time.Now().After(end) {
			t.Fatalf("still not true after a minute: %s", what)
		}
	}
}

// goid returns the running goroutine's id, from its stack's header.
func goid() string {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	return string(bytes.Fields(b)[1])
}

// Writes one after the other run on one goroutine, not one each; after a
// burst at most maxIdleWorkers wait, and none once the connection ends.
func TestWorkersReused(t *testing.T) {
	w := workers{tasks: make(chan func())}
	done := make(chan struct{})
	ids := map[string]bool{}
	for range 20 {
		ran := make(chan string)
		w.run(done, func() { ran <- goid() })
		ids[<-ran] = true
		// The worker counts itself idle right after its task.
		eventually(t, "one worker idle", func() bool { return w.idle.Load() == 1 })
	}
	if len(ids) != 1 {
		t.Fatalf("20 writes one after the other ran on %d goroutines, want 1", len(ids))
	}

	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		w.run(done, func() { defer wg.Done(); <-release })
	}
	close(release)
	wg.Wait()
	eventually(t, "maxIdleWorkers idle", func() bool { return w.idle.Load() == maxIdleWorkers })
	close(done)
	eventually(t, "no worker left", func() bool { return w.idle.Load() == 0 })
}
