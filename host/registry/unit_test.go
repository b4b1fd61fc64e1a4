package registry_test

import (
	"context"
	"errors"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/sdk"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestBreakerOpensProbesAndCloses(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	b := registry.NewTestBreaker(registry.Timings{Now: clk.Now})
	for range registry.DefaultBreakerThreshold - 1 {
		b.Failure()
	}
	if ok, _, _ := b.Allow(); !ok {
		t.Fatal("open before the threshold")
	}
	b.Failure()
	if ok, _, n := b.Allow(); ok || n != 3 {
		t.Fatalf("not open after 3 failures (ok=%v n=%d)", ok, n)
	}
	clk.Add(registry.DefaultBreakerCooldown - time.Second)
	if ok, _, _ := b.Allow(); ok {
		t.Fatal("open breaker let a call through before the cooldown")
	}
	clk.Add(2 * time.Second)
	ok, probe, _ := b.Allow()
	if !ok || !probe {
		t.Fatal("no half-open probe after the cooldown")
	}
	if ok, _, _ := b.Allow(); ok {
		t.Fatal("a second call went through during the probe")
	}
	b.Failure() // probe failed: open again for a full cooldown
	if ok, _, n := b.Allow(); ok || n != 4 {
		t.Fatalf("probe failure did not re-open (n=%d)", n)
	}
	clk.Add(registry.DefaultBreakerCooldown + time.Second)
	if ok, probe, _ := b.Allow(); !ok || !probe {
		t.Fatal("no probe after the second cooldown")
	}
	b.Release() // interrupted probe: the next call may probe
	if ok, probe, _ := b.Allow(); !ok || !probe {
		t.Fatal("released probe not offered again")
	}
	b.Success()
	if ok, probe, _ := b.Allow(); !ok || probe {
		t.Fatal("breaker not closed by a successful probe")
	}
}

func TestBackoffSchedule(t *testing.T) {
	t.Parallel()
	want := []float64{1, 2, 4, 8, 16, 32, 60, 60}
	for i, w := range want {
		if got := registry.Backoff(registry.Timings{}, i+1).Seconds(); got != w {
			t.Errorf("backoff(%d) = %vs, want %vs", i+1, got, w)
		}
	}
	d := registry.DefaultTimings()
	if d.InitialConnectAttempts != 3 || d.MaxReconnects != 5 || d.ParkedRetry != 300*time.Second ||
		d.SessionWait != 5*time.Second || d.ReconnectWait != 15*time.Second || d.BreakerCooldown != 60*time.Second ||
		d.DiscoveryTimeout != 120*time.Second {
		t.Errorf("defaults = %+v", d)
	}
}

// pingless answers ping with -32601 and counts tools/list probes.
type pingless struct {
	pings, lists int
	pingErr      error
}

func (p *pingless) Ping(context.Context) error { p.pings++; return p.pingErr }
func (p *pingless) ListToolsPage(context.Context, string) ([]mcpvalue.Tool, string, error) {
	p.lists++
	return nil, "", nil
}

func TestKeepaliveFallsBackToToolsList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := &pingless{pingErr: mcp.ErrMethodNotFound}
	unsupported := false
	for range 3 {
		if err := registry.Probe(ctx, p, true, &unsupported); err != nil {
			t.Fatal(err)
		}
	}
	if p.pings != 1 || p.lists != 3 || !unsupported {
		t.Fatalf("pings=%d lists=%d latched=%v; want one ping then tools/list", p.pings, p.lists, unsupported)
	}
	// Message form, and a server without tools is not probed further.
	p = &pingless{pingErr: errors.New("Unknown method: ping")}
	unsupported = false
	if err := registry.Probe(ctx, p, false, &unsupported); err != nil || p.lists != 0 || !unsupported {
		t.Fatalf("tool-less fallback: err=%v lists=%d", err, p.lists)
	}
	// A ping that got no answer (the transport's failure, as mcp-go
	// wraps it, or the probe's timeout) is a failed probe.
	for _, pingErr := range []error{
		mcptransport.NewError(sdk.NewError(sdk.CodeClosed, "connection refused")),
		mcptransport.NewError(sdk.NewError(sdk.CodeSessionExpired, "HTTP 404")),
		mcptransport.NewError(context.DeadlineExceeded),
	} {
		p = &pingless{pingErr: pingErr}
		unsupported = false
		if err := registry.Probe(ctx, p, true, &unsupported); err == nil || unsupported || p.lists != 0 {
			t.Fatalf("a failed ping (%v) was not reported", pingErr)
		}
	}
}
