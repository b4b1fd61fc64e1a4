package registry_test

import (
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
)

// A server's first start (no record of what it offered, never connected)
// gets config.FirstConnectTimeout when its entry sets no connect_timeout;
// once it connected, and so has a record, the entry's default applies; an
// entry's own connect_timeout always wins.
func TestFirstConnectGetsLongerTimeout(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	srv := tsServer(dir, "ts")
	srv.ConnectTimeout = config.DefaultConnectTimeout
	own := tsServer(dir, "own")
	own.ConnectTimeout = config.DefaultConnectTimeout
	own.Raw = map[string]any{"connect_timeout": 60}
	m := registry.New(registry.Options{Servers: []*config.Server{srv, own}, Deps: deps, Timings: fast()})
	t.Cleanup(func() { m.Close() })
	if got := m.FirstConnectTimeout("ts"); got != config.FirstConnectTimeout {
		t.Errorf("first connect of a new server: %v, want %v", got, config.FirstConnectTimeout)
	}
	if got := m.FirstConnectTimeout("own"); got != config.DefaultConnectTimeout {
		t.Errorf("an entry's own connect_timeout: %v, want it kept", got)
	}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := m.FirstConnectTimeout("ts"); got != config.DefaultConnectTimeout {
		t.Errorf("after the first connection: %v, want %v", got, config.DefaultConnectTimeout)
	}
	// A new run with the record the first one left: not a first start.
	m2 := registry.New(registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
	t.Cleanup(func() { m2.Close() })
	if got := m2.FirstConnectTimeout("ts"); got != config.DefaultConnectTimeout {
		t.Errorf("with a record of the server: %v, want %v", got, config.DefaultConnectTimeout)
	}
}
