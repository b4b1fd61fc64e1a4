package registry_test

import (
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
)

// A one-shot registry (Snapshot: hermes mcp call, hermes tools) reports a
// server that fails to connect as failed after its one attempt and
// retries nothing: nobody waits for a retry, so none is logged ("connect
// failed; retrying attempt=1 of=3" came just before the command said it
// failed).
func TestSnapshotDoesNotRetry(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	srv := tsServer(dir, "gone", "--fail-start", "kaboom")
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast(), Snapshot: true})
	st := m.Status()[0]
	if st.State != registry.StateFailed {
		t.Errorf("state after Start = %s (%s), want failed", st.State, st.Error)
	}
	if out := logs.String(); strings.Contains(out, "retrying") {
		t.Errorf("a one-shot registry logs a retry:\n%s", out)
	}
}
