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
	return session.Connect(context.Background(), srv, d)
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
	// Wait until the plugin and the server run under the host.
	var procs []int
	deadline := time.Now().Add(20 * time.Second)
	for {
		procs = testproc.Descendants(cmd.Process.Pid)
		if len(procs) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("plugin and server did not start: %v", procs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !waitForTrace(home, testserver.TraceSleepStarted, 20*time.Second) {
		cmd.Process.Kill()
		t.Fatal("the call did not reach the server within 20s")
	}
	procs = testproc.Descendants(cmd.Process.Pid)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline = time.Now().Add(10 * time.Second)
	for {
		var left []int
		for _, p := range procs {
			if testproc.Alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("processes outlived the host: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
			var procs []int
			deadline := time.Now().Add(20 * time.Second)
			for len(procs) < 2 {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("plugin and server did not start: %v", procs)
				}
				time.Sleep(50 * time.Millisecond)
				procs = testproc.Descendants(cmd.Process.Pid)
			}
			if !waitForTrace(home, testserver.TraceSleepStarted, 20*time.Second) {
				cmd.Process.Kill()
				t.Fatal("the call did not reach the server within 20s")
			}
			procs = testproc.Descendants(cmd.Process.Pid)
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
			for _, p := range procs {
				if testproc.Alive(p) {
					syscall.Kill(p, syscall.SIGKILL)
					t.Errorf("process %d outlived hermes", p)
				}
			}
		})
	}
}
