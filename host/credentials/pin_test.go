package credentials_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/credentials"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/sdk"
)

// pinned is a server entry whose catalog install shipped its own auth
// plugin, hermes-auth-fake, pinned in its plugin: block.
type pinned struct {
	home, bin, sum, record string
	srv                    *config.Server
}

// newPinned installs a copy of hermes-auth-fake into an install folder and
// returns the entry that pins it. searchPath is HERMES_PLUGIN_PATH.
func newPinned(t *testing.T, searchPath string) *pinned {
	t.Helper()
	t.Setenv("HERMES_PLUGIN_PATH", searchPath)
	p := &pinned{home: t.TempDir()}
	p.bin = filepath.Join(p.home, "mcp-installs", "gh", "hermes-auth-fake")
	p.sum = testbin.Install(t, testbin.Path(t, "hermes-auth-fake"), p.bin)
	p.record = filepath.Join(t.TempDir(), "record")
	p.srv = &config.Server{
		Name: "gh", URL: "http://127.0.0.1:9/mcp", Transport: "http", Auth: "fake", SSLVerify: true,
		Extra:  map[string]any{"fake": map[string]any{"record": p.record}},
		Plugin: &config.PluginPin{Kind: sdk.KindAuth, Name: "fake", Path: p.bin, SHA256: p.sum},
	}
	return p
}

func (p *pinned) open(t *testing.T) (*credentials.Server, error) {
	t.Helper()
	sup := supervisor.New(supervisor.Options{Home: p.home})
	t.Cleanup(sup.KillAll)
	m := credentials.New(credentials.Options{Home: p.home, Supervisor: sup})
	t.Cleanup(m.Close)
	ctx, cancel := context.WithTimeout(context.Background(), credentials.OpenTimeout)
	t.Cleanup(cancel)
	return m.For(ctx, p.srv)
}

// The pinned auth plugin runs from the install folder, where nothing on
// the search path would have found it.
func TestPinnedAuthPluginRuns(t *testing.T) {
	p := newPinned(t, t.TempDir())
	if spec := credentials.LaunchSpec(p.srv); spec.Path != p.bin || spec.SHA256 != p.sum || spec.Reinstall != "gh" {
		t.Fatalf("LaunchSpec = %+v, want the pinned binary", spec)
	}
	a, err := p.open(t)
	if err != nil {
		t.Fatalf("the pinned auth plugin was refused: %v", err)
	}
	if _, err := a.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec, err := os.ReadFile(p.record)
	if err != nil || !strings.Contains(string(rec), "open server=gh") {
		t.Fatalf("the pinned plugin did not open the server (%v): %q", err, rec)
	}
}

// An auth plugin binary changed after install is refused before it runs.
func TestPinnedAuthPluginSwapped(t *testing.T) {
	p := newPinned(t, t.TempDir())
	testbin.Install(t, testbin.Path(t, "hermes-auth-exec"), p.bin)
	_, err := p.open(t)
	var ce *supervisor.ChecksumError
	if !errors.As(err, &ce) || ce.Want != p.sum {
		t.Fatalf("want a ChecksumError against the pin, got %v", err)
	}
	for _, want := range []string{"auth method 'fake' of server 'gh'", "plugin binary " + p.bin + " changed since install", "run `hermes mcp install gh` again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := os.Stat(p.record); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the swapped binary ran (record file: %v)", err)
	}
}

// With the pinned binary gone, the same-named plugin on the search path is
// not run in its place.
func TestPinnedAuthPluginNoFallback(t *testing.T) {
	p := newPinned(t, testbin.Dir(t))
	if err := os.Remove(p.bin); err != nil {
		t.Fatal(err)
	}
	_, err := p.open(t)
	if !errors.Is(err, supervisor.ErrNotFound) || !strings.Contains(err.Error(), "hermes mcp install gh") {
		t.Fatalf("want ErrNotFound naming the reinstall, got %v", err)
	}
	if _, err := os.Stat(p.record); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a plugin from the search path ran (record file: %v)", err)
	}
}

// A pin for the entry's transport plugin leaves its auth plugin to the
// search path.
func TestTransportPinLeavesAuthUnpinned(t *testing.T) {
	srv := &config.Server{Name: "gh", Auth: "fake",
		Plugin: &config.PluginPin{Kind: sdk.KindTransport, Name: "fake", Path: "/x/hermes-transport-fake", SHA256: strings.Repeat("0", 64)}}
	if spec := credentials.LaunchSpec(srv); spec.Path != "" || spec.SHA256 != "" || spec.Reinstall != "" || spec.Name != "fake" || spec.Kind != sdk.KindAuth {
		t.Fatalf("LaunchSpec = %+v, want the unpinned hermes-auth-fake", spec)
	}
}
