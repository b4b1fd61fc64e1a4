package registry_test

import (
	"context"
	"sync"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
)

// Every tools/call carries a progress token, and the server's
// notifications/progress for it reach the caller's callback, in order,
// before the call returns; a call without a callback still sends a token
// (the test server answers on the caller's token only).
func TestProgressReachesTheCall(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	m := startManager(t, registry.Options{Deps: deps, Servers: []*config.Server{tsServer(dir, "ts")}})

	var mu sync.Mutex
	var got []registry.Progress
	ctx := registry.WithProgress(context.Background(), func(p registry.Progress) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	})
	if r := mustCall(t, m, "mcp_ts_slow_stream", nil); r["result"] != "done" {
		t.Fatalf("without a callback: %v", r)
	}
	out, err := call(m, ctx, "mcp_ts_slow_stream", map[string]any{"steps": 3, "interval_ms": 1})
	if err != nil || decode(t, out)["result"] != "done" {
		t.Fatalf("call: %s %v", out, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("want 3 progress notifications, got %+v", got)
	}
	for i, p := range got {
		if p.Progress != float64(i+1) || p.Total != 3 {
			t.Errorf("notification %d: %+v", i, p)
		}
	}
}
