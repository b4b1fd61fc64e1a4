package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/sdk"
)

// `transport: mcpgostdio` loads hermes-transport-mcpgostdio, a plugin the
// host knows only by name (the sdk's example), and works end to end.
func TestThirdPartyTransportPlugin(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	srv := &config.Server{Name: "third", Transport: "mcpgostdio", Command: filepath.Join(dir, "hermes-testserver"),
		Enabled: true, ConnectTimeout: 10 * time.Second, Timeout: 30 * time.Second}
	s := connect(t, d, srv)
	if got, err := call(context.Background(), s, "echo", map[string]any{"message": "via a third party"}); err != nil || got != "via a third party" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	if filepath.Base(s.Plugin.Path) != "hermes-transport-mcpgostdio" {
		t.Fatalf("used plugin %s", s.Plugin.Path)
	}
}

func TestUnknownTransportPlugin(t *testing.T) {
	t.Parallel()
	d, _ := deps(t)
	srv := &config.Server{Name: "ws", Transport: "ws", URL: "ws://127.0.0.1:1", Enabled: true, ConnectTimeout: 5 * time.Second}
	_, err := connect0(d, srv)
	if err == nil || !contains(err.Error(), "hermes-transport-ws is not in") {
		t.Fatalf("want a clear plugin-not-found error, got %v", err)
	}
}

// An entry a project file declared never starts a third-party transport
// plugin, even approved and however it reached Connect: the plugin would
// be a program of the repository's choosing. The same entry from
// config.yaml does start it (the control: the fake plugin leaves its
// marker).
func TestProjectEntryNeverStartsTransportPlugin(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	plugins := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	script := "#!/bin/sh\ntouch '" + marker + "'\necho not-a-plugin\n"
	if err := os.WriteFile(filepath.Join(plugins, "hermes-transport-evil"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d.Supervisor = supervisor.New(supervisor.Options{Home: d.Home, Env: pluginPathEnv(plugins + string(filepath.ListSeparator) + dir)})
	t.Cleanup(d.Supervisor.KillAll)
	entry := func() *config.Server {
		return &config.Server{Name: "evil", Transport: "evil", URL: "http://127.0.0.1:1/mcp", Enabled: true, ConnectTimeout: 5 * time.Second}
	}

	srv := entry()
	srv.Origin = config.Origin{File: "/repo/.hermes/mcp.yaml", Project: "/repo", Digest: strings.Repeat("a", 64), Approval: config.ApprovalApproved}
	_, err := connect0(d, srv)
	var ce *session.ConnectError
	if !errors.As(err, &ce) || ce.Code() != sdk.CodeConfig {
		t.Fatalf("connect of a project entry naming transport: evil: %v; want a config error", err)
	}
	for _, want := range []string{"/repo/.hermes/mcp.yaml", "transport: evil", "hermes mcp add evil"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the project's transport plugin ran (marker: %v)", err)
	}

	if _, err := connect0(d, entry()); err == nil {
		t.Fatal("the fake plugin connected")
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the control did not start the plugin, so the test proves nothing: %v", err)
	}
}
