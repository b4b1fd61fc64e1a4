package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// countingServer is the test server started through a shell that appends
// a line to file at each start, so a test can count the server's starts.
func countingServer(dir, file string, args ...string) *config.Server {
	srv := testServer(dir, args...)
	srv.Command = "/bin/sh"
	srv.Args = []string{"-c", `echo start >> "$0"; exec "$@"`, file, filepath.Join(dir, "hermes-testserver")}
	srv.Args = append(srv.Args, args...)
	return srv
}

// starts is how many times the counting server started.
func starts(file string) int {
	b, _ := os.ReadFile(file)
	return strings.Count(string(b), "start\n")
}

// A transport plugin prelaunched with its plan's EarlyOpenConfig starts the
// server before anyone asks it to open (no Launch, no Open yet), and the
// Connect of that plan takes that server: one start, a working session.
// Prelaunched with another config, the plugin's early server is closed and
// Connect's Open starts its own: two starts, and it works the same.
func TestEarlyOpen(t *testing.T) {
	t.Parallel()
	for _, same := range []bool{true, false} {
		name := map[bool]string{true: "same config", false: "another config"}[same]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d, dir := deps(t)
			file := filepath.Join(t.TempDir(), "starts")
			srv := countingServer(dir, file)
			plan := session.PlanFor(srv, d.Home, d.Environ)
			early := plan.EarlyOpenConfig()
			if early == nil {
				t.Fatal("no early open config for a local server's plan")
			}
			if !same {
				other := *srv
				other.Args = append(append([]string(nil), srv.Args...), "--name", "other")
				early = session.PlanFor(&other, d.Home, d.Environ).EarlyOpenConfig()
			}
			d.Supervisor.Prelaunch(plan.Spec, early)
			testwait.For(t, time.Minute, "the server started by the early open", func() bool { return starts(file) == 1 })
			s, err := session.Connect(context.Background(), plan, d)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer s.Close()
			got, err := call(context.Background(), s, "echo", map[string]any{"message": "early"})
			if err != nil || got != "early" {
				t.Fatalf("echo = %q, %v", got, err)
			}
			if want := map[bool]int{true: 1, false: 2}[same]; starts(file) != want {
				t.Fatalf("the server started %d times, want %d", starts(file), want)
			}
			if !same && s.Init.ServerInfo.Name != "hermes-testserver" {
				t.Fatalf("connected to %q: the early server of another config was taken", s.Init.ServerInfo.Name)
			}
		})
	}
}

// A plan that needs the host while its connection opens, or is not a
// local server's, is never opened ahead.
func TestEarlyOpenConfigOnlyForLocalServers(t *testing.T) {
	t.Parallel()
	d, _ := deps(t)
	remote := &config.Server{Name: "r", Transport: "http", URL: "http://127.0.0.1:1/mcp", Enabled: true,
		ConnectTimeout: time.Second, Timeout: time.Second}
	if b := session.PlanFor(remote, d.Home, d.Environ).EarlyOpenConfig(); b != nil {
		t.Fatalf("a remote server's plan has an early open config: %d bytes", len(b))
	}
}
