package session_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testproc"
)

// A server that double-forks a setsid daemon leaves nothing running once
// a one-shot hermes command is done: the stdio plugin, the daemon's
// subreaper, kills it when it stops the server.
func TestNoDaemonOutlivesHermes(t *testing.T) {
	dir := testbin.Dir(t)
	home := t.TempDir()
	pidFile := filepath.Join(home, "daemon.pid")
	cfg := fmt.Sprintf("mcp_servers:\n  d:\n    command: %s\n    args: [--daemon, %s]\n", filepath.Join(dir, "hermes-testserver"), pidFile)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, "hermes"), "mcp", "call", "d", "echo", "--arg", "message=hi")
	cmd.Env = append(os.Environ(), "HERMES_HOME="+home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hermes mcp call: %v\n%s", err, out)
	}
	pid := testproc.PidFile(t, pidFile, "the daemon the server starts", 20*time.Second)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	// The plugin stops the server on its own after the command (it was
	// detached): within its graces.
	testproc.WaitGone(t, "the daemon the server left behind", 20*time.Second, pid)
}
