package cli_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/cli"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// runResult is one run of the hermes binary.
type runResult struct {
	stdout, stderr string
	code           int
}

// hermesEnv is the environment of a hermes run: the caller's, minus what
// would change its behaviour, plus the home folder and the test plugins.
func hermesTestEnv(t *testing.T, home string, extra ...string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HERMES_HOME", "HERMES_PLUGIN_PATH", "HERMES_SAFE_MODE", "NO_COLOR", "TERM":
			continue
		case "BROWSER", "DISPLAY", "WAYLAND_DISPLAY", "SSH_CLIENT", "SSH_TTY", "SSH_CONNECTION":
			// No test opens a real browser; a test that wants one sets
			// BROWSER to the fake.
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HERMES_HOME="+home, "HERMES_PLUGIN_PATH="+testbin.Dir(t), "NO_COLOR=1", "TERM=xterm")
	return append(env, extra...)
}

// runHermes runs hermes in process (cli.Run) without a terminal: stdin
// reads nothing.
func runHermes(t *testing.T, home string, args ...string) runResult {
	t.Helper()
	return runHermesEnv(t, home, nil, args...)
}

func runHermesEnv(t *testing.T, home string, extra []string, args ...string) runResult {
	t.Helper()
	return runHermesInput(t, home, extra, nil, args...)
}

// runHermesInput runs hermes in process with stdin read from in (nothing
// when in is nil), the environment hermesTestEnv makes and extra added.
func runHermesInput(t *testing.T, home string, extra []string, in io.Reader, args ...string) runResult {
	t.Helper()
	return runInProcess(t, "", hermesTestEnv(t, home, extra...), in, args...)
}

// runInProcess runs one hermes command line through cli.Run in dir (""
// is the test's working folder) with environ as its environment, to its
// end, however long a loaded machine makes it (bounded by
// testwait.Context). hermes reads its environment only through
// cli.Options.Env (config's ${VAR}s, a stdio server's environment, the
// plugins'), so tests with different variables run side by side.
func runInProcess(t *testing.T, dir string, environ []string, in io.Reader, args ...string) runResult {
	t.Helper()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(cli.Options{
			Args:  append([]string{"hermes"}, args...),
			Stdin: in, Stdout: &out, Stderr: &errb,
			Env: environ, Dir: dir,
		})
	}()
	select {
	case code := <-done:
		return runResult{stdout: out.String(), stderr: errb.String(), code: code}
	case <-testwait.Context(t).Done():
		t.Fatalf("hermes %s had not finished when the test binary's -timeout was near; stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out.String(), errb.String())
	}
	return runResult{}
}

// syncBuffer is a bytes.Buffer safe for a run's goroutines to write while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// runHermesBinary runs the built binary, for what only a process shows
// (its exit status, a real stdin); stdin is in (nil: /dev/null).
func runHermesBinary(t *testing.T, home string, extra []string, in io.Reader, args ...string) runResult {
	t.Helper()
	cmd := exec.Command(testbin.Path(t, "hermes"), args...)
	cmd.Env = hermesTestEnv(t, home, extra...)
	cmd.Stdin = in
	return runCmd(t, cmd)
}

// runCmd runs a prepared hermes command to its end (bounded by testwait.Context) and
// returns what it printed and its exit code.
func runCmd(t *testing.T, cmd *exec.Cmd) runResult {
	t.Helper()
	args := cmd.Args[1:]
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-testwait.Context(t).Done():
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("hermes %s had not finished when the test binary's -timeout was near; stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out.String(), errb.String())
	}
	r := runResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("hermes %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// must fails the test unless the run exited with want.
func (r runResult) must(t *testing.T, want int) runResult {
	t.Helper()
	if r.code != want {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
	return r
}

// oneLineErr fails unless stderr is exactly one line containing all of want.
func (r runResult) oneLineErr(t *testing.T, want ...string) {
	t.Helper()
	s := strings.TrimSuffix(r.stderr, "\n")
	if s == "" || strings.Contains(s, "\n") {
		t.Fatalf("stderr is not one line: %q", r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("stderr %q lacks %q", s, w)
		}
	}
}

// testServerPath is the path of the test MCP server.
func testServerPath(t *testing.T) string {
	t.Helper()
	return testbin.Path(t, "hermes-testserver")
}

// newHome returns an empty Hermes home folder.
func newHome(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "home")
}

// writeConfig writes config.yaml into home.
func writeConfig(t *testing.T, home, text string) {
	t.Helper()
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// readConfig returns config.yaml of home ("" when missing).
func readConfig(t *testing.T, home string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "config.yaml"))
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// startHTTPServer starts hermes-testserver over streamable HTTP and returns its
// /mcp endpoint.
func startHTTPServer(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(testServerPath(t), append([]string{"--http", "127.0.0.1:0"}, args...)...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = pw.Close()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
	})
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), "listening on "); ok {
				select {
				case urlc <- strings.Fields(u)[0]:
				default:
				}
			}
		}
	}()
	select {
	case u := <-urlc:
		return u + "/mcp"
	case <-done:
		t.Fatal("hermes-testserver exited before listening")
	case <-time.After(30 * time.Second):
		t.Fatal("hermes-testserver did not listen within 30s")
	}
	return ""
}
