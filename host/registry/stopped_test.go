package registry_test

import (
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
)

// A session whose plugin hermes stops on purpose (the supervisor's KillAll
// at the end of a one-shot command, before the registry closed it) ended;
// it was not dropped: no "connection ended" or "connection lost" warning
// is logged, and the
// close handler hears no error.
func TestStoppedPluginIsNoDroppedConnection(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	closed := make(chan error, 1)
	deps.OnClosed = func(_ string, err error) { closed <- err }
	m := startManager(t, registry.Options{Servers: []*config.Server{tsServer(dir, "ts")}, Deps: deps, Timings: fast()})
	if st := m.Status()[0]; st.State != registry.StateConnected {
		t.Fatalf("not connected: %+v", st)
	}
	deps.Supervisor.KillAll()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("the close handler heard %v for a plugin hermes stopped", err)
		}
	case <-time.After(2 * time.Minute):
		// It failed so in full runs under load: the registry's Close of
		// the ended session, quick after done, hid the end from OnClosed
		// (sdk/pluginhost read byHost after closing done). The goroutines
		// and the log say where, should it come back.
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Fatalf("the end of the session was never reported; goroutines:\n%s\nlog:\n%s", stacks.String(), logs.String())
	}
	if l := logs.String(); strings.Contains(l, "connection ended") || strings.Contains(l, "connection lost") {
		t.Errorf("a deliberate stop was logged as a dropped connection:\n%s", logs.String())
	}
}
