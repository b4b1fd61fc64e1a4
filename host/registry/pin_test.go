package registry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/sdk"
)

// An entry whose plugin: block pins its transport plugin connects through
// the installed binary; once that binary changes, the entry fails at once
// with what to do, is not retried, and never starts its server; put back
// (as installing again does), Reload connects it.
func TestPinnedTransportChanged(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	server := filepath.Join(dir, "hermes-testserver")
	marker := filepath.Join(t.TempDir(), "started")
	bin := filepath.Join(deps.Home, "mcp-installs", "ts", "hermes-transport-stdio")
	stdio := testbin.Path(t, "hermes-transport-stdio")
	sum := testbin.Install(t, stdio, bin)
	// The stdio plugin starts its servers through the launcher beside it.
	testbin.Install(t, testbin.Path(t, "hermes-stdio-launcher"), filepath.Join(filepath.Dir(bin), "hermes-stdio-launcher"))
	entry := func(name string) string {
		return shellEntry(name, marker, server, "pinned") +
			"    plugin:\n      kind: transport\n      name: stdio\n      path: " + bin + "\n      sha256: " + sum + "\n"
	}
	servers := loadConfig(t, deps.Home, "mcp_servers:\n"+entry("ts"))

	// The binary is changed before the host starts.
	testbin.Install(t, testbin.Path(t, "hermes-transport-mcpgostdio"), bin)
	m := startManager(t, registry.Options{Servers: servers, Deps: deps, Timings: fast()})
	st := status(m, "ts")
	if st.State != registry.StateFailed || st.Code != sdk.CodeConfig ||
		!strings.Contains(st.Error, "plugin binary "+bin+" changed since install") || !strings.Contains(st.Error, "run `hermes mcp install ts` again") {
		t.Fatalf("state %s, code %q, error %q; want failed, config, the changed binary and what to do", st.State, st.Code, st.Error)
	}
	if st.Rejected {
		t.Error("a changed plugin is marked as rejected by the security check")
	}
	if _, err := callTool(m, context.Background(), "ts", "echo", map[string]any{"message": "x"}); err == nil {
		t.Error("a tool call reached a server behind a changed plugin")
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the changed plugin started the server (marker: %v)", err)
	}

	// Installed again: the same entry connects on Reload.
	testbin.Install(t, stdio, bin)
	res, err := m.Reload(context.Background(), servers)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Reconnected, "ts") {
		t.Errorf("Reload did not retry the failed entry: %+v", res)
	}
	eventually(t, 30*time.Second, "the reinstalled entry connects", func() bool {
		return status(m, "ts").State == registry.StateConnected
	})
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the entry connected without its server leaving the marker: %v", err)
	}
}
