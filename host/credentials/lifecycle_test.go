package credentials_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/credentials"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// An auth plugin that crashed is started again by the next use of the
// server's credentials, instead of every later call failing on a dead
// process.
func TestAuthPluginCrashRestartsOnNextUse(t *testing.T) {
	t.Setenv("HERMES_PLUGIN_PATH", testbin.Dir(t))
	home := t.TempDir()
	record := filepath.Join(t.TempDir(), "record")
	srv := &config.Server{
		Name: "gh", URL: "http://127.0.0.1:9/mcp", Transport: "http", Auth: "fake", SSLVerify: true,
		Extra: map[string]any{"fake": map[string]any{"record": record}},
	}
	sup := supervisor.New(supervisor.Options{Home: home})
	t.Cleanup(sup.KillAll)
	m := credentials.New(credentials.Options{Home: home, Supervisor: sup})
	t.Cleanup(m.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*credentials.OpenTimeout)
	defer cancel()
	a, err := m.For(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Status(ctx); err != nil {
		t.Fatal(err)
	}
	pid := a.Pid()
	if pid == 0 {
		t.Fatal("no plugin process")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 2*time.Minute, "the killed plugin to be gone", func() bool { return a.Pid() != pid })
	again, err := m.For(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.Status(ctx); err != nil {
		t.Fatalf("status after the plugin crashed: %v", err)
	}
	if p := again.Pid(); p == 0 || p == pid {
		t.Fatalf("plugin pid %d after the crash of %d, want a new process", p, pid)
	}
	rec, _ := os.ReadFile(record)
	if n := strings.Count(string(rec), "open server=gh"); n != 2 {
		t.Fatalf("the plugin was opened %d times, want 2:\n%s", n, rec)
	}
}
