package supervisor

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Backoff is the wait before starting again something that keeps failing:
// First after the first failure, doubled after each further one, never
// more than Max.
type Backoff struct {
	First, Max time.Duration
}

// Wait returns the wait after n consecutive failures (0 for none).
func (b Backoff) Wait(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := b.First
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// Default restart policy of an Instance: the first restart after a crash
// waits DefaultFirstRestart, later ones of a plugin that keeps crashing
// wait longer, up to DefaultMaxRestart; a plugin that ran for
// DefaultStableAfter counts as healthy again.
const (
	DefaultFirstRestart = 250 * time.Millisecond
	DefaultMaxRestart   = 30 * time.Second
	DefaultStableAfter  = time.Minute
)

// ErrInstanceClosed is the error of Get after Close.
var ErrInstanceClosed = errors.New("the plugin is stopping")

// InstanceOptions configure an Instance.
type InstanceOptions struct {
	// Backoff is the wait before a start that follows crashes or failed
	// starts; zero fields take the defaults.
	Backoff Backoff
	// StableAfter is how long a plugin must have run for its exit not to
	// count as a crash in a row (the backoff starts over).
	StableAfter time.Duration
	// Restart starts the plugin again after it exits, once the backoff
	// has passed, without waiting for a use (a plugin that must keep
	// running). Without it the next Get starts it.
	Restart bool
	// OnExit, when set, is told how each started plugin process ended
	// (its ExitReason) unless Close or Drop ended it; it runs on its own
	// goroutine.
	OnExit func(reason string)
	// OnRestartFailed, when set, is told why a Restart start failed.
	OnRestartFailed func(err error)
	// HealthyOnStart counts every successful start as healthy at once:
	// the failures in a row start over, and the start after that process
	// ended (crashed, dropped or forgotten) is at once; only failed starts
	// back off. For a connection that was up and then dropped (the
	// registry's sessions): reconnect at once, back off only if that
	// fails. Without it a process is healthy only once it ran StableAfter.
	HealthyOnStart bool
	// Now and After are the clock (nil: the time package's); tests set
	// them to see the backoff without waiting it out.
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
}

// OpenFunc starts one plugin process and opens what the caller uses of it
// (a dispensed, described and opened client). On failure it kills what it
// started.
type OpenFunc[T any] func(ctx context.Context) (T, *Plugin, error)

// Instance keeps one plugin running on demand, the one lifecycle of every
// long-lived plugin the host holds (a server's auth method, the serve
// bridge, a registry server's transport session): Get starts it on first use, one start at a time (concurrent
// callers wait for that start and share it); a process that exits is
// forgotten and its exit reason kept; the next Get (or, with Restart, the
// Instance itself) starts it again after a backoff that grows while it
// keeps crashing. Its methods are safe for concurrent use.
type Instance[T any] struct {
	open OpenFunc[T]
	o    InstanceOptions

	mu       sync.Mutex
	cur      *running[T]
	starting chan struct{} // closed when the start under way ends
	closed   bool
	failures int           // crashes and failed starts in a row
	notAfter time.Time     // no start before this (the backoff)
	held     bool          // no start before a Wake (Hold(0))
	woken    chan struct{} // closed and replaced by Wake
	// wokeSince: a Wake came since the last start began; the failure of
	// that start then neither backs off nor Holds.
	wokeSince bool
	lastExit  string
	starts    int
}

// running is one started process and its opened value.
type running[T any] struct {
	v       T
	p       *Plugin
	started time.Time
	dropped bool // Drop or Close ended it: its exit is no crash
}

// NewInstance returns an Instance that starts its plugin with open. Nothing
// starts before the first Get.
func NewInstance[T any](open OpenFunc[T], o InstanceOptions) *Instance[T] {
	if o.Backoff.First <= 0 {
		o.Backoff.First = DefaultFirstRestart
	}
	if o.Backoff.Max <= 0 {
		o.Backoff.Max = DefaultMaxRestart
	}
	if o.StableAfter <= 0 {
		o.StableAfter = DefaultStableAfter
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.After == nil {
		o.After = time.After
	}
	return &Instance[T]{open: open, o: o, woken: make(chan struct{})}
}

// Get returns the running plugin's value and process, starting it when none
// runs: at once the first time, after the backoff when it crashed or failed
// to start. It fails with ctx's error, ErrInstanceClosed, or the start's.
func (i *Instance[T]) Get(ctx context.Context) (T, *Plugin, error) {
	var zero T
	for {
		i.mu.Lock()
		if i.closed {
			i.mu.Unlock()
			return zero, nil, ErrInstanceClosed
		}
		if r := i.cur; r != nil {
			i.mu.Unlock()
			select {
			case <-r.p.Exited():
				// Gone before its watcher saw it: forget it now.
				i.exited(r)
				continue
			default:
			}
			return r.v, r.p, nil
		}
		if ch := i.starting; ch != nil {
			i.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return zero, nil, ctx.Err()
			}
		}
		ch := make(chan struct{})
		i.starting = ch
		i.wokeSince = false
		wait := max(i.notAfter.Sub(i.o.Now()), 0)
		if i.held {
			wait = -1
		}
		woken := i.woken
		i.mu.Unlock()

		r, err := i.start(ctx, wait, woken)
		i.mu.Lock()
		i.starting = nil
		close(ch)
		if err != nil {
			if ctx.Err() == nil {
				i.failed()
			}
			i.mu.Unlock()
			return zero, nil, err
		}
		if i.closed {
			i.mu.Unlock()
			r.p.Kill()
			return zero, nil, ErrInstanceClosed
		}
		i.cur = r
		i.starts++
		if i.o.HealthyOnStart {
			i.failures, i.notAfter = 0, time.Time{}
		}
		i.mu.Unlock()
		go i.watch(r)
		return r.v, r.p, nil
	}
}

// start waits out the backoff (wait < 0: until a Wake), then opens one
// process. A Wake cuts the wait short.
func (i *Instance[T]) start(ctx context.Context, wait time.Duration, woken <-chan struct{}) (*running[T], error) {
	if wait != 0 {
		var after <-chan time.Time
		if wait > 0 {
			after = i.o.After(wait)
		}
		select {
		case <-after:
		case <-woken:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		// The open that follows answers every Wake so far: one that
		// ended the wait is spent, not carried over to override a
		// later Hold (an idle stop after a start woken by a call
		// would start again at once).
		i.mu.Lock()
		closed := i.closed
		i.wokeSince = false
		i.mu.Unlock()
		if closed {
			return nil, ErrInstanceClosed
		}
	}
	v, p, err := i.open(ctx)
	if err != nil {
		return nil, err
	}
	return &running[T]{v: v, p: p, started: i.o.Now()}, nil
}

// failed counts a crash or failed start and sets the backoff (none when
// a Wake came since the start began); i.mu held.
func (i *Instance[T]) failed() {
	i.failures++
	if i.wokeSince {
		i.notAfter = time.Time{}
		return
	}
	i.notAfter = i.o.Now().Add(i.o.Backoff.Wait(i.failures))
}

// watch forgets r when its process exits and, with Restart, starts the
// plugin again.
func (i *Instance[T]) watch(r *running[T]) {
	<-r.p.Exited()
	if !i.exited(r) || !i.o.Restart {
		return
	}
	if _, _, err := i.Get(context.Background()); err != nil && !errors.Is(err, ErrInstanceClosed) && i.o.OnRestartFailed != nil {
		i.o.OnRestartFailed(err)
	}
}

// exited forgets r, a process that has exited, once; it reports whether
// that was a crash (not Drop or Close).
func (i *Instance[T]) exited(r *running[T]) bool {
	reason := r.p.ExitReason(time.Second)
	i.mu.Lock()
	if i.cur != r || r.dropped || i.closed {
		i.mu.Unlock()
		return false
	}
	i.cur = nil
	i.lastExit = reason
	if !i.o.HealthyOnStart {
		if i.o.Now().Sub(r.started) >= i.o.StableAfter {
			i.failures = 0
		}
		i.failed()
	}
	i.mu.Unlock()
	if i.o.OnExit != nil {
		go i.o.OnExit(reason)
	}
	return true
}

// Drop forgets p, a process the caller found broken, and kills it; the
// next Get starts a new one (at once: the caller saw it broken, it did not
// crash on its own). A p that is not the current one is left alone.
func (i *Instance[T]) Drop(p *Plugin) {
	i.mu.Lock()
	r := i.cur
	if r == nil || r.p != p {
		i.mu.Unlock()
		return
	}
	r.dropped = true
	i.cur = nil
	i.mu.Unlock()
	go p.Kill()
}

// Forget forgets p, a process the caller ends itself (a graceful close it
// waits for), as Drop does but without killing it. A p that is not the
// current one is left alone.
func (i *Instance[T]) Forget(p *Plugin) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if r := i.cur; r != nil && r.p == p {
		r.dropped = true
		i.cur = nil
	}
}

// Hold puts off the next start by d from now instead of the backoff (a
// caller that gave up for a while); d <= 0 holds it until Wake. A Wake
// that came since the last start began wins: the next start is at once.
func (i *Instance[T]) Hold(d time.Duration) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.wokeSince {
		return
	}
	i.held = d <= 0
	i.notAfter = i.o.Now().Add(d)
}

// Wake lets the next start happen now: it ends a backoff or Hold, also
// one a Get is waiting out (the user asked, a call is waiting). The count
// of failures in a row stays, so a start that fails again backs off
// further.
func (i *Instance[T]) Wake() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.held = false
	i.notAfter = time.Time{}
	i.wokeSince = true
	close(i.woken)
	i.woken = make(chan struct{})
}

// Failures returns the crashes and failed starts in a row, and the wait
// still due before the next start (negative: held until Wake).
func (i *Instance[T]) Failures() (n int, wait time.Duration) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.held {
		return i.failures, -1
	}
	return i.failures, max(i.notAfter.Sub(i.o.Now()), 0)
}

// Current returns the running plugin's value and process without starting
// one; ok is false when none runs.
func (i *Instance[T]) Current() (v T, p *Plugin, ok bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.cur == nil {
		return v, nil, false
	}
	return i.cur.v, i.cur.p, true
}

// LastExit says how the last crashed process ended (its ExitReason); ""
// when none has.
func (i *Instance[T]) LastExit() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.lastExit
}

// Starts counts the processes started so far.
func (i *Instance[T]) Starts() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.starts
}

// Close stops the running process, if any; every later Get fails with
// ErrInstanceClosed.
func (i *Instance[T]) Close() {
	i.mu.Lock()
	i.closed = true
	close(i.woken) // a Get waiting out a backoff ends
	i.woken = make(chan struct{})
	r := i.cur
	i.cur = nil
	if r != nil {
		r.dropped = true
	}
	i.mu.Unlock()
	if r != nil {
		r.p.Kill()
	}
}
