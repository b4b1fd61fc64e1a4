package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testlog"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// liveEnv returns session deps using the freshly built plugins, a
// throw-away home, the folder of the test binaries and the captured log.
func liveEnv(t testing.TB) (session.Deps, string, *testlog.Buffer) {
	t.Helper()
	dir := testbin.Dir(t)
	testbin.Path(t, "hermes-transport-stdio")
	testbin.Path(t, "hermes-testserver")
	home := t.TempDir()
	logs := &testlog.Buffer{}
	logger := hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Info, Output: logs})
	// The plugin search path through Options.Env, not t.Setenv: the
	// process environment is shared by the tests running in parallel.
	env := func(k string) (string, bool) {
		if k == "HERMES_PLUGIN_PATH" {
			return dir, true
		}
		return os.LookupEnv(k)
	}
	sup := supervisor.New(supervisor.Options{Home: home, Logger: logger, Env: env})
	t.Cleanup(sup.KillAll)
	return session.Deps{Home: home, Supervisor: sup, Logger: logger}, dir, logs
}

// tsServer is a stdio entry for the Go test server.
func tsServer(dir, name string, args ...string) *config.Server {
	return &config.Server{
		Name: name, Transport: "stdio", Command: filepath.Join(dir, "hermes-testserver"), Args: args,
		Enabled: true, ConnectTimeout: 10 * time.Second, Timeout: 30 * time.Second,
		KeepaliveInterval: config.DefaultKeepaliveInterval,
		Tools:             config.ToolsFilter{Resources: true, Prompts: true},
	}
}

// fast are short timings for tests: quick retries, and generous waits
// for a session, which a loaded machine (and tests running side by side)
// can take seconds to bring up; no test waits them out on purpose.
func fast() registry.Timings {
	return registry.Timings{
		InitialBackoff: 20 * time.Millisecond, MaxBackoff: 80 * time.Millisecond,
		ParkedRetry: time.Second, SessionWait: 30 * time.Second, ReconnectWait: 30 * time.Second,
		BreakerCooldown: time.Second, ShutdownWait: 5 * time.Second,
	}
}

func startManager(t *testing.T, opts registry.Options) *registry.Manager {
	t.Helper()
	m := registry.New(opts)
	t.Cleanup(func() { m.Close() })
	if err := m.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return m
}

func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.For(t, d, what, cond)
}

// mustCall calls name and decodes {"result": ...}.
func mustCall(t *testing.T, m *registry.Manager, name string, args map[string]any) map[string]any {
	t.Helper()
	out, err := call(m, context.Background(), name, args)
	if err != nil {
		t.Fatalf("Call %s: %v (%s)", name, err, out)
	}
	return decode(t, out)
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("result is not a JSON object: %v: %s", err, s)
	}
	return v
}

func callErr(t *testing.T, m *registry.Manager, name string, args map[string]any) *registry.CallError {
	t.Helper()
	out, err := call(m, context.Background(), name, args)
	var ce *registry.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("Call %s: want a CallError, got %v (%s)", name, err, out)
	}
	if got := decode(t, out)["error"]; got == nil || got == "" {
		t.Fatalf("Call %s: failure without an error result: %s", name, out)
	}
	return ce
}

func names(defs []toolview.ToolDef) map[string]toolview.ToolDef {
	out := map[string]toolview.ToolDef{}
	for _, d := range defs {
		out[d.Name] = d
	}
	return out
}

func status(m *registry.Manager, name string) registry.ServerStatus {
	for _, s := range m.Status() {
		if s.Name == name {
			return s
		}
	}
	return registry.ServerStatus{}
}

// serverTraces counts the lines the test servers of deps wrote to their
// stderr log that are exactly line (one of testserver's Trace* lines, given
// with --trace).
func serverTraces(deps session.Deps, line string) int {
	b, _ := os.ReadFile(filepath.Join(deps.Home, "logs", "mcp-stderr.log"))
	return strings.Count(string(b), line+"\n")
}

func hasAll(t *testing.T, got map[string]toolview.ToolDef, want ...string) {
	t.Helper()
	for _, w := range want {
		if _, ok := got[w]; !ok {
			t.Errorf("tool %s not registered; have %s", w, strings.Join(keys(got), ", "))
		}
	}
}

func hasNone(t *testing.T, got map[string]toolview.ToolDef, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if _, ok := got[w]; ok {
			t.Errorf("tool %s registered, should not be", w)
		}
	}
}

func keys(m map[string]toolview.ToolDef) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

var jsonMarshal = json.Marshal
