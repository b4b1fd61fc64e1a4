package session_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testproc"
	"github.com/hermes-agent/hermes/internal/testserver"
)

// containmentHome writes a HERMES_HOME whose config.yaml holds entries
// (YAML, indented under mcp_servers) and returns it.
func containmentHome(t *testing.T, entries string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("mcp_servers:\n"+entries), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// A descriptor open in hermes's caller (`hermes mcp call ... 7<secret`)
// reaches no server, sandboxed or not, nor a third-party plugin's: hermes
// passes on nothing it inherited to its plugins, and neither the stdio
// plugin nor its launcher passes on what it inherited. The server looks at every descriptor it
// holds above 2 and reads descriptor 7 itself; its environment holds no
// variable of hermes, the plugin or the launcher.
func TestServerInheritsNoDescriptor(t *testing.T) {
	dir := testbin.Dir(t)
	probe := filepath.Join(dir, "hermes-sandboxprobe")
	home := containmentHome(t, fmt.Sprintf(
		"  open:\n    command: %[1]s\n  boxed:\n    command: %[1]s\n    sandbox: {network: none}\n"+
			"  third:\n    command: %[1]s\n    transport: mcpgostdio\n", probe))
	const secret = "the-caller's-secret-7f3a"
	secretPath := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretPath, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(t *testing.T, server, tool string, args ...string) string {
		t.Helper()
		f, err := os.Open(secretPath)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		null, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer null.Close()
		cmd := exec.Command(filepath.Join(dir, "hermes"), append([]string{"mcp", "call", server, tool}, args...)...)
		cmd.Env = append(os.Environ(), "HERMES_HOME="+home, "HERMES_CALLER_ONLY=leaked")
		// fds 3..6 are /dev/null, 7 the secret: as `7<secret` in a shell.
		cmd.ExtraFiles = []*os.File{null, null, null, null, f}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("hermes mcp call %s %s: %v\n%s", server, tool, err, out)
		}
		return string(out)
	}
	// third: a third-party transport plugin (the sdk's example) that
	// starts its server with os/exec, as most would: what hermes hands
	// its plugins must hold nothing of its caller's either.
	for _, server := range []string{"open", "boxed", "third"} {
		t.Run(server, func(t *testing.T) {
			out := call(t, server, "read_fd", "--arg", "fd=7")
			if strings.Contains(out, secret) || !strings.Contains(out, "failed:") {
				t.Errorf("the server read descriptor 7 of hermes's caller: %s", out)
			}
			out = call(t, server, "descriptors")
			t.Logf("descriptors of the server: %s", out)
			if strings.Contains(out, secret) || strings.Contains(out, secretPath) {
				t.Errorf("the server holds the caller's secret file: %s", out)
			}
			if server == "third" {
				return // what environment it gives its server is the plugin's own affair
			}
			out = call(t, server, "environ")
			for _, leak := range []string{"HERMES_CALLER_ONLY", "HERMES_PLUGIN_STREAM_FD", "HERMES_STDIO_SANDBOX_LAUNCHER", "PLUGIN_", "GOMAXPROCS"} {
				if strings.Contains(out, leak) {
					t.Errorf("the server's environment holds %s:\n%s", leak, out)
				}
			}
		})
	}
}

// A server that double-forks a setsid daemon is ended with everything it
// left when hermes dies mid-call: SIGKILLed, or interrupted as a terminal's
// Ctrl-C does (SIGINT to its process group), which kills the plugins at
// once; and when the plugin alone is SIGKILLed. The daemon's pid is polled
// until it is gone.
func TestNoDaemonOutlivesKilledHermes(t *testing.T) {
	dir := testbin.Dir(t)
	kills := []struct {
		name string
		kill func(t *testing.T, hermes int)
	}{
		{"SIGKILL", func(t *testing.T, hermes int) { _ = syscall.Kill(-hermes, syscall.SIGKILL) }},
		{"SIGINT", func(t *testing.T, hermes int) { _ = syscall.Kill(-hermes, syscall.SIGINT) }},
		{"plugin-SIGKILL", func(t *testing.T, hermes int) {
			for _, p := range testproc.Children(hermes) {
				if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p)); strings.HasPrefix(string(comm), "hermes-transpor") {
					_ = syscall.Kill(p, syscall.SIGKILL)
					return
				}
			}
			t.Fatal("no stdio plugin under hermes")
		}},
	}
	for _, k := range kills {
		for _, boxed := range []bool{false, true} {
			name := k.name
			if boxed {
				name += "/sandboxed"
			}
			t.Run(name, func(t *testing.T) {
				work := t.TempDir()
				pidFile := filepath.Join(work, "daemon.pid")
				entry := fmt.Sprintf("  d:\n    command: %s\n    args: [--trace, --daemon, %s]\n", filepath.Join(dir, "hermes-testserver"), pidFile)
				if boxed {
					entry += fmt.Sprintf("    sandbox: {network: none, writable: [%s]}\n", work)
				}
				home := containmentHome(t, entry)
				cmd := exec.Command(filepath.Join(dir, "hermes"), "mcp", "call", "d", "sleep", "--arg", "ms=60000")
				cmd.Env = append(os.Environ(), "HERMES_HOME="+home)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a terminal's foreground group of its own
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
				daemon := testproc.PidFile(t, pidFile, "the daemon the server starts", 30*time.Second)
				t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGKILL) })
				if !waitForTrace(home, testserver.TraceSleepStarted, 30*time.Second) {
					t.Fatal("the call did not reach the server within 30s")
				}
				k.kill(t, cmd.Process.Pid)
				if k.name != "plugin-SIGKILL" {
					select {
					case <-done:
					case <-time.After(30 * time.Second):
						t.Fatalf("hermes did not exit on %s", k.name)
					}
				}
				testproc.WaitGone(t, "the daemon the server left behind", 30*time.Second, daemon)
			})
		}
	}
}
