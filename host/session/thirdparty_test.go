package session_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
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
