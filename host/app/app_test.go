package app_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/app"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/internal/testbin"
)

// newFactory builds a run's root over a fresh home whose config.yaml is
// cfg, with the freshly built plugins on the search path.
func newFactory(t *testing.T, cfg string) (*app.Factory, *bytes.Buffer) {
	t.Helper()
	home := t.TempDir()
	if cfg != "" {
		if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var stderr bytes.Buffer
	f := app.New(app.Options{
		Env:    []string{"HERMES_HOME=" + home, "HOME=" + t.TempDir(), "HERMES_PLUGIN_PATH=" + testbin.Dir(t), "PATH=" + os.Getenv("PATH")},
		Dir:    t.TempDir(),
		Stderr: &stderr,
	})
	t.Cleanup(func() { f.Close(false) })
	return f, &stderr
}

func TestRunsInOneProcessKeepTheirOwnParts(t *testing.T) {
	t.Parallel()
	a, aerr := newFactory(t, "")
	b, _ := newFactory(t, "")
	if a.Home == b.Home {
		t.Fatalf("two runs share the home %s", a.Home)
	}
	if a.Requests().Sampling() == b.Requests().Sampling() {
		t.Fatal("two runs share one sampling host")
	}
	if a.Requests() != a.Requests() || a.Credentials() != a.Credentials() {
		t.Fatal("one run built its request provider or credentials twice")
	}
	a.WarnOnce("k", "first")
	a.WarnOnce("k", "second")
	b.WarnOnce("k", "other run")
	if got := aerr.String(); strings.Count(got, "Warning:") != 1 || !strings.Contains(got, "first") {
		t.Fatalf("warnings of the run: %q, want the first one once", got)
	}
	if v, ok := a.Lookup("PATH"); !ok || v == "" {
		t.Fatal("the run's environment was not read")
	}
	if _, ok := a.Lookup("HERMES_TEST_NOT_GIVEN"); ok {
		t.Fatal("a variable the run was not given was found")
	}
}

// A listing from the cache starts nothing for a server with a fresh record;
// a snapshot connects it; both come from the one constructor.
func TestRegistryModes(t *testing.T) {
	t.Parallel()
	testbin.Path(t, "hermes-transport-stdio")
	server := testbin.Path(t, "hermes-testserver")
	f, _ := newFactory(t, "mcp_servers:\n  ts:\n    command: "+server+"\n")
	cfg, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	snap, _ := f.Registry(app.Snapshot, cfg.Servers)
	if err := snap.Start(ctx); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	st := snap.Status()
	if len(st) != 1 || st[0].State != registry.StateConnected || len(snap.Tools()) == 0 {
		t.Fatalf("snapshot did not connect the server: %+v", st)
	}
	listed := len(snap.Tools())
	snap.Close()

	cached, _ := f.Registry(app.Cached, cfg.Servers)
	defer cached.Close()
	if err := cached.Start(ctx); err != nil {
		t.Fatalf("cached: %v", err)
	}
	st = cached.Status()
	if len(st) != 1 || st[0].State != registry.StateIdle || len(cached.Tools()) != listed {
		t.Fatalf("a listing from the record started the server or lost its tools: %+v, %d tools", st, len(cached.Tools()))
	}
}
