package session_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testproc"
	"github.com/hermes-agent/hermes/internal/testserver"
)

func connect0(d session.Deps, srv *config.Server) (*session.Session, error) {
	return session.Connect(context.Background(), session.PlanFor(srv, d.Home, d.Environ), d)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// When the host is SIGKILLed mid-call, its plugin and the plugin's server
// die too: no orphans.
func TestHostKilledLeavesNoOrphans(t *testing.T) {
	dir := testbin.Dir(t)
	home := t.TempDir()
	cfg := fmt.Sprintf("mcp_servers:\n  ts:\n    command: %s\n    args: [--trace]\n", filepath.Join(dir, "hermes-testserver"))
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, "hermes"), "-v", "mcp", "call", "ts", "sleep", "--arg", "ms=60000")
	cmd.Env = append(os.Environ(), "HERMES_HOME="+home)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
		}
	}()
	// The call reached the server: the plugin and the server run under
	// the host.
	if !waitForTrace(home, testserver.TraceSleepStarted, 20*time.Second) {
		cmd.Process.Kill()
		t.Fatal("the call did not reach the server within 20s")
	}
	procs := testproc.Descendants(cmd.Process.Pid)
	if len(procs) < 2 {
		cmd.Process.Kill()
		t.Fatalf("plugin and server not found under the host: %v", procs)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	t.Cleanup(func() {
		for _, p := range procs {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	testproc.WaitGone(t, "processes of the killed host", 10*time.Second, procs...)
}

// SIGTERM (and SIGINT) to the host mid-call: hermes exits, and its plugin
// and server go with it.
func TestHostSIGTERMKillsPlugins(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := testbin.Dir(t)
			home := t.TempDir()
			cfg := fmt.Sprintf("mcp_servers:\n  ts:\n    command: %s\n    args: [--trace]\n", filepath.Join(dir, "hermes-testserver"))
			if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(filepath.Join(dir, "hermes"), "mcp", "call", "ts", "sleep", "--arg", "ms=60000")
			cmd.Env = append(os.Environ(), "HERMES_HOME="+home)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if !waitForTrace(home, testserver.TraceSleepStarted, 20*time.Second) {
				cmd.Process.Kill()
				t.Fatal("the call did not reach the server within 20s")
			}
			procs := testproc.Descendants(cmd.Process.Pid)
			if len(procs) < 2 {
				cmd.Process.Kill()
				t.Fatalf("plugin and server not found under the host: %v", procs)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("hermes exited 0 after a signal mid-call")
				}
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("hermes did not exit on %s", sig)
			}
			t.Cleanup(func() {
				for _, p := range procs {
					_ = syscall.Kill(p, syscall.SIGKILL)
				}
			})
			// SIGKILLed at hermes's exit, they are gone once the kernel
			// has ended them (a server's pid namespace is torn down
			// with its init).
			testproc.WaitGone(t, "processes of hermes after "+sig.String(), 10*time.Second, procs...)
		})
	}
}
