package supervisor_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// clock is a test clock: Now stands still unless moved, and After records
// each backoff asked for and lets it pass at once, so the test sees the
// backoff without waiting it out.
type clock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

func (c *clock) move(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *clock) asked() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// stdioInstance keeps hermes-transport-stdio running through an Instance:
// a real plugin process, started, handshaken and dispensed by open.
func stdioInstance(t *testing.T, o supervisor.InstanceOptions) *supervisor.Instance[any] {
	t.Helper()
	t.Setenv("HERMES_PLUGIN_PATH", testbin.Dir(t))
	s := supervisor.New(supervisor.Options{Home: t.TempDir()})
	t.Cleanup(s.KillAll)
	inst := supervisor.NewInstance(func(context.Context) (any, *supervisor.Plugin, error) {
		p, err := s.Launch(stdioSpec("instance"))
		if err != nil {
			return nil, nil, err
		}
		raw, err := p.Dispense()
		if err != nil {
			p.Kill()
			return nil, nil, err
		}
		return raw, p, nil
	}, o)
	t.Cleanup(inst.Close)
	return inst
}

func get(t *testing.T, inst *supervisor.Instance[any]) *supervisor.Plugin {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, p, err := inst.Get(ctx)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return p
}

// crash kills p's process as a crash would, and waits until it is gone.
func crash(t *testing.T, p *supervisor.Plugin) {
	t.Helper()
	if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	case <-time.After(2 * time.Minute):
		t.Fatal("the killed plugin did not exit")
	}
}

// Concurrent first uses start one process and share it.
func TestInstanceConcurrentFirstUsesStartOnce(t *testing.T) {
	inst := stdioInstance(t, supervisor.InstanceOptions{})
	const n = 8
	pids := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, p, err := inst.Get(context.Background())
			if err != nil {
				t.Error(err)
				pids <- 0
				return
			}
			pids <- p.Pid()
		}()
	}
	wg.Wait()
	close(pids)
	first := 0
	for pid := range pids {
		if first == 0 {
			first = pid
		}
		if pid == 0 || pid != first {
			t.Fatalf("callers got different processes: %d and %d", first, pid)
		}
	}
	if inst.Starts() != 1 {
		t.Fatalf("%d processes started for %d concurrent first uses, want 1", inst.Starts(), n)
	}
}

// A crashed plugin is started again by the next use, after a backoff that
// doubles while it keeps crashing and starts over once it ran long enough;
// how it ended is reported.
func TestInstanceCrashRestartsOnNextUseWithBackoff(t *testing.T) {
	clk := &clock{now: time.Unix(1e9, 0)}
	exits := make(chan string, 4)
	first := 100 * time.Millisecond
	inst := stdioInstance(t, supervisor.InstanceOptions{
		Backoff:     supervisor.Backoff{First: first, Max: time.Second},
		StableAfter: time.Hour,
		OnExit:      func(reason string) { exits <- reason },
		Now:         clk.Now, After: clk.After,
	})
	p1 := get(t, inst)
	if w := clk.asked(); len(w) != 0 {
		t.Fatalf("the first start waited %v", w)
	}
	crash(t, p1)
	p2 := get(t, inst)
	if p2.Pid() == p1.Pid() {
		t.Fatal("the crashed process was handed out again")
	}
	select {
	case reason := <-exits:
		if !strings.Contains(reason, "SIGKILL") || !strings.Contains(reason, "hermes-transport-stdio") {
			t.Fatalf("exit reason %q, want the binary and the signal", reason)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the crash was not reported")
	}
	if !strings.Contains(inst.LastExit(), "SIGKILL") {
		t.Fatalf("LastExit = %q", inst.LastExit())
	}
	crash(t, p2)
	get(t, inst)
	if w := clk.asked(); len(w) != 2 || w[0] != first || w[1] != 2*first {
		t.Fatalf("backoffs %v, want [%v %v]", w, first, 2*first)
	}
	// A process that ran past StableAfter was healthy: its crash waits
	// the first backoff again.
	_, p3p, _ := inst.Current()
	clk.move(2 * time.Hour)
	crash(t, p3p)
	get(t, inst)
	if w := clk.asked(); len(w) != 3 || w[2] != first {
		t.Fatalf("backoffs %v, want the third to start over at %v", w, first)
	}
	if inst.Starts() != 4 {
		t.Fatalf("%d starts, want 4", inst.Starts())
	}
}

// With Restart the plugin is started again after a crash without waiting
// for a use.
func TestInstanceRestartKeepsItRunning(t *testing.T) {
	exits := make(chan string, 1)
	inst := stdioInstance(t, supervisor.InstanceOptions{Restart: true, OnExit: func(r string) { exits <- r }})
	p1 := get(t, inst)
	crash(t, p1)
	<-exits
	testwait.For(t, 2*time.Minute, "the plugin to be started again", func() bool {
		_, p, ok := inst.Current()
		return ok && p.Pid() != p1.Pid()
	})
}

// A dropped process is replaced by the next use at once (it did not
// crash), and after Close nothing starts.
func TestInstanceDropAndClose(t *testing.T) {
	clk := &clock{now: time.Unix(1e9, 0)}
	exits := make(chan string, 1)
	inst := stdioInstance(t, supervisor.InstanceOptions{Now: clk.Now, After: clk.After, OnExit: func(r string) { exits <- r }})
	p1 := get(t, inst)
	inst.Drop(p1)
	p2 := get(t, inst)
	if p2.Pid() == p1.Pid() || len(clk.asked()) != 0 {
		t.Fatalf("after Drop: same process %v, backoffs %v", p2.Pid() == p1.Pid(), clk.asked())
	}
	<-p1.Exited()
	inst.Close()
	<-p2.Exited()
	if _, _, err := inst.Get(context.Background()); !errors.Is(err, supervisor.ErrInstanceClosed) {
		t.Fatalf("Get after Close = %v", err)
	}
	select {
	case r := <-exits:
		t.Fatalf("a dropped or closed process was reported as a crash: %s", r)
	default:
	}
}

// failingInstance is stdioInstance whose starts fail while fail is set;
// hook, when set, runs at the start of each open.
func failingInstance(t *testing.T, o supervisor.InstanceOptions, fail *atomic.Bool, hook func()) (*supervisor.Instance[any], *atomic.Int32) {
	t.Helper()
	t.Setenv("HERMES_PLUGIN_PATH", testbin.Dir(t))
	s := supervisor.New(supervisor.Options{Home: t.TempDir()})
	t.Cleanup(s.KillAll)
	opens := &atomic.Int32{}
	inst := supervisor.NewInstance(func(context.Context) (any, *supervisor.Plugin, error) {
		opens.Add(1)
		if hook != nil {
			hook()
		}
		if fail.Load() {
			return nil, nil, errors.New("connect refused")
		}
		p, err := s.Launch(stdioSpec("instance"))
		if err != nil {
			return nil, nil, err
		}
		return nil, p, nil
	}, o)
	t.Cleanup(inst.Close)
	return inst, opens
}

// With HealthyOnStart only failed starts back off: a good start clears
// the failures in a row, and the start after its process ended, crashed
// or forgotten, is at once. Forget leaves the process to the caller.
func TestInstanceHealthyOnStart(t *testing.T) {
	clk := &clock{now: time.Unix(1e9, 0)}
	first := 100 * time.Millisecond
	var fail atomic.Bool
	fail.Store(true)
	inst, _ := failingInstance(t, supervisor.InstanceOptions{
		Backoff: supervisor.Backoff{First: first, Max: time.Second}, HealthyOnStart: true,
		Now: clk.Now, After: clk.After,
	}, &fail, nil)
	for range 2 {
		if _, _, err := inst.Get(context.Background()); err == nil {
			t.Fatal("a failing start succeeded")
		}
	}
	if n, wait := inst.Failures(); n != 2 || wait != 2*first {
		t.Fatalf("Failures() = %d, %v; want 2, %v", n, wait, 2*first)
	}
	fail.Store(false)
	p1 := get(t, inst)
	if n, wait := inst.Failures(); n != 0 || wait != 0 {
		t.Fatalf("after a good start Failures() = %d, %v; want 0, 0", n, wait)
	}
	crash(t, p1)
	p2 := get(t, inst)
	inst.Forget(p2)
	p3 := get(t, inst)
	if w := clk.asked(); len(w) != 2 || w[0] != first || w[1] != 2*first {
		t.Fatalf("backoffs %v, want only [%v %v] (before the second and third starts)", w, first, 2*first)
	}
	if p3.Pid() == p2.Pid() {
		t.Fatal("a forgotten process was handed out again")
	}
	select {
	case <-p2.Exited():
		t.Fatal("Forget killed the process; the caller ends it")
	default:
	}
	p2.Kill()
}

// Hold puts the next start off (until Wake for 0); Wake ends a backoff or
// Hold, also one a Get is waiting out, and a Wake during a start that
// then fails wins over the backoff and a later Hold.
func TestInstanceHoldAndWake(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	var wakeInOpen atomic.Bool
	var inst *supervisor.Instance[any]
	inst, opens := failingInstance(t, supervisor.InstanceOptions{Backoff: supervisor.Backoff{First: time.Hour, Max: time.Hour}}, &fail, func() {
		if wakeInOpen.Load() {
			inst.Wake()
		}
	})
	if _, _, err := inst.Get(context.Background()); err == nil {
		t.Fatal("a failing start succeeded")
	}
	inst.Hold(0)
	if _, wait := inst.Failures(); wait >= 0 {
		t.Fatalf("held until Wake, Failures() wait = %v, want < 0", wait)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := inst.Get(cancelled); !errors.Is(err, context.Canceled) || opens.Load() != 1 {
		t.Fatalf("a held Get = %v after %d opens, want context.Canceled and no new open", err, opens.Load())
	}
	// A Get waiting out the Hold starts once woken.
	fail.Store(false)
	got := make(chan error, 1)
	go func() { _, _, err := inst.Get(context.Background()); got <- err }()
	inst.Wake()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("woken Get: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Wake did not end the Hold")
	}
	_, p, _ := inst.Current()
	inst.Drop(p)
	// A start that fails after a Wake came in the meantime backs off
	// nothing, and a Hold after it is ignored: the wake is answered.
	fail.Store(true)
	wakeInOpen.Store(true)
	if _, _, err := inst.Get(context.Background()); err == nil {
		t.Fatal("a failing start succeeded")
	}
	inst.Hold(time.Hour)
	if _, wait := inst.Failures(); wait != 0 {
		t.Fatalf("after a wake during the start, wait = %v, want 0", wait)
	}
	wakeInOpen.Store(false)
	fail.Store(false)
	before := opens.Load()
	get(t, inst)
	if opens.Load() != before+1 {
		t.Fatalf("%d opens, want one more", opens.Load()-before)
	}
}

// waitClock is a test clock whose After never passes and tells the test
// each time a start begins to wait on it.
type waitClock struct{ waiting chan time.Duration }

func (c *waitClock) Now() time.Time { return time.Unix(1e9, 0) }

func (c *waitClock) After(d time.Duration) <-chan time.Time {
	c.waiting <- d
	return nil
}

// A Wake that ends a start's wait is answered by that start: a Hold after
// it holds again (a server stopped when idle, after a call woke it, must
// not start again at once).
func TestInstanceWakeIsSpentByTheStartItEnds(t *testing.T) {
	clk := &waitClock{waiting: make(chan time.Duration, 1)}
	var fail atomic.Bool
	inst, opens := failingInstance(t, supervisor.InstanceOptions{Now: clk.Now, After: clk.After, HealthyOnStart: true}, &fail, nil)
	inst.Hold(time.Hour)
	got := make(chan error, 1)
	go func() { _, _, err := inst.Get(context.Background()); got <- err }()
	select {
	case <-clk.waiting:
	case <-time.After(2 * time.Minute):
		t.Fatal("the Get never waited out the Hold")
	}
	inst.Wake()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("woken Get: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Wake did not end the wait")
	}
	_, p, _ := inst.Current()
	inst.Forget(p)
	p.Kill()
	inst.Hold(0)
	if _, wait := inst.Failures(); wait >= 0 {
		t.Fatalf("a Hold after the start the Wake ended: wait = %v, want held until the next Wake (< 0)", wait)
	}
	if n := opens.Load(); n != 1 {
		t.Fatalf("%d opens, want 1", n)
	}
}
