package cli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// SIGTERM ends hermes while it is busy with a step that does not look at
// signals: here reading a big config.yaml that is still being written (a
// pipe whose writer stops half way), where hermes would otherwise wait
// forever. It exits with 128+15 and says it was interrupted.
func TestSIGTERMWhileReadingConfig(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(home, "config.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cmd, stdout, stderr, done := startHermes(t, home, "mcp", "list")

	// A FIFO opens for writing without blocking only once a reader has it
	// open: then hermes is reading config.yaml.
	// Opening a FIFO for writing blocks until its reader opens it: the
	// open returning is the signal.
	opened := make(chan *os.File, 1)
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			opened <- f
		}
	}()
	var w *os.File
	select {
	case w = <-opened:
	case <-time.After(30 * time.Second):
		// Release the blocked open before failing.
		if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			defer r.Close()
		}
		t.Fatal("hermes did not open config.yaml within 30s")
	}
	defer w.Close()
	// Half of a big config: hermes has read all but the last pipe buffer of
	// it once the writes return, and waits for the rest.
	big := "mcp_servers:\n  s:\n    command: x\n" + strings.Repeat("# a long comment line to make the file big\n", 2<<20/44)
	if _, err := w.WriteString(big); err != nil {
		t.Fatal(err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		done <- err // for the cleanup
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
			t.Fatalf("hermes exited with %v, want status %d; stderr: %q", err, 128+int(syscall.SIGTERM), stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("hermes ignored SIGTERM while reading its config; stderr: %q", stderr.String())
	}
	if got := stderr.String(); got != "Interrupted (terminated)\n" {
		t.Errorf("stderr %q, want one line saying it was interrupted", got)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q", stdout.String())
	}
}

// Ctrl-C (SIGINT) during a one-shot call ends hermes with 130, as shells
// expect of an interrupted command, and says so; it was exit 1 with
// "context canceled".
func TestInterruptedCallExits130(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  ts:\n    command: "+testServerPath(t)+"\n    args: [--trace]\n")
	cmd, _, stderr, done := startHermes(t, home, "mcp", "call", "ts", "sleep", "ms=600000")
	// The server writes "sleep started" to its stderr, which hermes keeps
	// in logs/mcp-stderr.log: then the call is under way.
	log := filepath.Join(home, "logs", "mcp-stderr.log")
	testwait.For(t, 60*time.Second, "the call to start", func() bool {
		b, _ := os.ReadFile(log)
		return bytes.Contains(b, []byte("hermes-testserver trace: sleep started"))
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := <-done
	done <- err // for the cleanup
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "Interrupted") || strings.Contains(stderr.String(), "context canceled") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// startHermes starts the built hermes with args and home, its output
// captured; done receives its end once (a receiver that takes it puts it
// back for the cleanup, which kills it if it still runs).
func startHermes(t *testing.T, home string, args ...string) (cmd *exec.Cmd, stdout, stderr *bytes.Buffer, done chan error) {
	t.Helper()
	cmd = exec.Command(testbin.Path(t, "hermes"), args...)
	cmd.Env = hermesTestEnv(t, home)
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done = make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	return cmd, stdout, stderr, done
}
