package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/sdk"
)

// pinnedTransport is a server entry whose catalog install shipped its own
// transport plugin: a copy of hermes-transport-stdio in the entry's install
// folder, pinned by its sha256 in the plugin: block, while the same-named
// plugin also sits on the search path.
type pinnedTransport struct {
	d      session.Deps
	dir    string // the freshly built binaries (the search path)
	bin    string // the installed plugin binary
	sum    string // its sha256 at install
	marker string // written by the server of started(), if it ever runs
}

func newPinnedTransport(t *testing.T) *pinnedTransport {
	t.Helper()
	d, dir := deps(t)
	p := &pinnedTransport{d: d, dir: dir, marker: filepath.Join(t.TempDir(), "ran")}
	p.bin = filepath.Join(d.Home, "mcp-installs", "ts", sdk.BinaryName(sdk.KindTransport, "stdio"))
	p.sum = testbin.Install(t, testbin.Path(t, sdk.BinaryName(sdk.KindTransport, "stdio")), p.bin)
	// The stdio plugin starts its servers through the launcher beside it.
	testbin.Install(t, testbin.Path(t, "hermes-stdio-launcher"), filepath.Join(filepath.Dir(p.bin), "hermes-stdio-launcher"))
	return p
}

// server is the Go test server's entry pinned to the plugin binary with
// sha256 sum.
func (p *pinnedTransport) server(sum string) *config.Server {
	srv := testServer(p.dir)
	srv.Plugin = &config.PluginPin{Kind: sdk.KindTransport, Name: "stdio", Path: p.bin, SHA256: sum}
	return srv
}

// started is the entry of a server that writes the marker when it runs,
// then serves as the Go test server: the marker proves the plugin spawned
// it.
func (p *pinnedTransport) started(sum string) *config.Server {
	srv := p.server(sum)
	srv.Command, srv.Args = "/bin/sh", []string{"-c", `touch "$0" && exec "$1"`, p.marker, srv.Command}
	srv.ConnectTimeout = 5 * time.Second
	return srv
}

// neverRan fails if the marker's server was started.
func (p *pinnedTransport) neverRan(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(p.marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the server was started by a refused plugin (marker: %v)", err)
	}
	if _, err := os.Stat(filepath.Join(p.d.Home, "logs", "mcp-stderr.log")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused plugin ran and opened the server's stderr log (%v)", err)
	}
}

// refusedAsChanged fails unless err is the refusal of a changed plugin
// binary: a config error (not retried) naming the binary and the install
// to redo, on one line.
func refusedAsChanged(t *testing.T, err error, bin string) {
	t.Helper()
	var ce *session.ConnectError
	if !errors.As(err, &ce) || ce.Code() != sdk.CodeConfig {
		t.Fatalf("want a config ConnectError, got %#v (%v)", err, err)
	}
	msg := err.Error()
	for _, want := range []string{"plugin binary " + bin + " changed since install", "sha256", "run `hermes mcp install ts` again"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
}

// A matching pin runs the installed binary itself, which connects to the
// server.
func TestPinnedTransportPluginConnects(t *testing.T) {
	t.Parallel()
	p := newPinnedTransport(t)
	srv := p.server(p.sum)
	if spec := session.PlanFor(srv, t.TempDir(), nil).Spec; spec.Path != p.bin || spec.SHA256 != p.sum || spec.Reinstall != "ts" || spec.Dir != "" {
		t.Fatalf("plan's Spec = %+v, want the pinned binary", spec)
	}
	s := connect(t, p.d, srv)
	if s.Plugin.Path != p.bin {
		t.Fatalf("plugin ran from %s, want the pinned %s", s.Plugin.Path, p.bin)
	}
	got, err := call(context.Background(), s, "echo", map[string]any{"message": "pinned"})
	if err != nil || got != "pinned" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	// And at the next start too: the check is made at every launch.
	s.Close()
	s = connect(t, p.d, srv)
	if _, err := call(context.Background(), s, "echo", map[string]any{"message": "again"}); err != nil {
		t.Fatal(err)
	}
}

// The pinned plugin also sandboxes its server: its launcher re-executes
// the very binary that was checked.
func TestPinnedTransportPluginSandboxes(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is enforced on Linux only")
	}
	p := newPinnedTransport(t)
	srv := p.server(p.sum)
	sb, err := config.ParseSandbox(map[string]any{"network": "none"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Sandbox = sb
	s := connect(t, p.d, srv)
	if s.Plugin.Path != p.bin {
		t.Fatalf("plugin ran from %s, want the pinned %s", s.Plugin.Path, p.bin)
	}
	if rep := s.Sandbox(); rep == nil || len(rep.Gaps) != 0 {
		t.Fatalf("sandbox report %v; want one with no gaps", rep)
	}
	if got, err := call(context.Background(), s, "echo", map[string]any{"message": "boxed"}); err != nil || got != "boxed" {
		t.Fatalf("echo = %q, %v", got, err)
	}
}

// A pin that is not the binary's sha256 is refused before the plugin runs.
func TestPinnedTransportPluginWrongPin(t *testing.T) {
	t.Parallel()
	p := newPinnedTransport(t)
	wrong := strings.Repeat("ab", 32)
	_, err := connect0(p.d, p.started(wrong))
	refusedAsChanged(t, err, p.bin)
	p.neverRan(t)
}

// A binary swapped after install (here for another, working transport
// plugin) is refused at the next start, before it runs.
func TestPinnedTransportPluginSwapped(t *testing.T) {
	t.Parallel()
	p := newPinnedTransport(t)
	// Before the swap the same entry runs, and its server leaves the
	// marker: its absence below means the plugin never started it.
	s := connect(t, p.d, p.started(p.sum))
	s.Close()
	for _, f := range []string{p.marker, filepath.Join(p.d.Home, "logs", "mcp-stderr.log")} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	testbin.Install(t, testbin.Path(t, "hermes-transport-mcpgostdio"), p.bin)
	_, err := connect0(p.d, p.started(p.sum))
	refusedAsChanged(t, err, p.bin)
	p.neverRan(t)
}

// With the installed binary gone, the same-named plugin on the search
// path is not run in its place.
func TestPinnedTransportPluginNoFallback(t *testing.T) {
	t.Parallel()
	p := newPinnedTransport(t)
	if err := os.Remove(p.bin); err != nil {
		t.Fatal(err)
	}
	_, err := connect0(p.d, p.started(p.sum))
	var ce *session.ConnectError
	if !errors.As(err, &ce) || ce.Code() != sdk.CodeNotFound || !strings.Contains(err.Error(), "run `hermes mcp install ts` again") {
		t.Fatalf("want not-found naming the install to redo, got %v", err)
	}
	p.neverRan(t)
}

// A pin for the entry's auth plugin leaves its transport plugin to the
// search path.
func TestAuthPinLeavesTransportUnpinned(t *testing.T) {
	t.Parallel()
	srv := &config.Server{Name: "gh", Transport: "http", URL: "https://example.com/mcp", Auth: "fake",
		Plugin: &config.PluginPin{Kind: sdk.KindAuth, Name: "fake", Path: "/x/hermes-auth-fake", SHA256: strings.Repeat("0", 64)}}
	if spec := session.PlanFor(srv, t.TempDir(), nil).Spec; spec.Path != "" || spec.SHA256 != "" || spec.Reinstall != "" || spec.Name != "http" || spec.Kind != sdk.KindTransport {
		t.Fatalf("plan's Spec = %+v, want the unpinned hermes-transport-http", spec)
	}
}
