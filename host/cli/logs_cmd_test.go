//go:build unix

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/cli"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/hermes-agent/hermes/sdk/logfile"
)

// stderrServer writes a script that prints line to its stderr, then runs
// the test server.
func stderrServer(t *testing.T, line string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "server.sh")
	script := "#!/bin/sh\nprintf '" + line + "\\n' >&2\nexec " + testbin.Path(t, "hermes-testserver") + " \"$@\"\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// hermes mcp logs NAME shows what that server wrote to its stderr (not
// another server's lines), escaped, with hermes's own lines about it; a
// server that never ran has none and says so; an unknown server is a
// one-line error. -f shows lines written after it started, also once the
// file was rotated, until it is interrupted.
func TestMcpLogs(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	a := stderrServer(t, `alpha-start \033[31mred\033[0m`)
	b := stderrServer(t, "bravo-start")
	writeConfig(t, home, "mcp_servers:\n  alpha:\n    command: "+a+"\n  bravo:\n    command: "+b+"\n  idle:\n    command: "+b+"\n")
	runHermes(t, home, "mcp", "call", "alpha", "echo", "--arg", "message=x").must(t, 0)
	runHermes(t, home, "mcp", "call", "bravo", "echo", "--arg", "message=x").must(t, 0)

	r := runHermes(t, home, "mcp", "logs", "alpha").must(t, 0)
	for _, want := range []string{"[stderr] ===== starting MCP server 'alpha' =====", `[stderr] alpha-start \x1b[31mred\x1b[0m`, "hermes.mcp.alpha: connected"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("logs alpha lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "\x1b") || strings.Contains(r.stdout, "bravo") {
		t.Errorf("logs alpha shows a raw escape or another server's lines:\n%q", r.stdout)
	}
	if r := runHermes(t, home, "mcp", "logs", "alpha", "--lines", "1").must(t, 0); strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("--lines 1:\n%s", r.stdout)
	}
	if r := runHermes(t, home, "mcp", "logs", "idle").must(t, 0); strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stdout, "No log lines about 'idle' yet") {
		t.Errorf("a server that never ran: stdout %q stderr %q", r.stdout, r.stderr)
	}
	runHermes(t, home, "mcp", "logs", "nope").must(t, 1).oneLineErr(t, "no server named 'nope'")

	// -f: in process, interrupted as Ctrl-C would.
	var out, errb syncBuffer
	sigs := make(chan os.Signal, 1)
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(cli.Options{Args: []string{"hermes", "mcp", "logs", "alpha", "-f"}, Stdout: &out, Stderr: &errb,
			Env: hermesTestEnv(t, home), Signals: sigs})
	}()
	testwait.For(t, time.Minute, "the last lines before -f", func() bool { return strings.Contains(out.String(), "alpha-start") })
	// A new start of the server writes after -f started.
	runHermes(t, home, "mcp", "call", "alpha", "echo", "--arg", "message=again").must(t, 0)
	testwait.For(t, time.Minute, "a line written after -f started", func() bool { return strings.Count(out.String(), "alpha-start") == 2 })
	// The file is rotated: the lines after the rotation are shown too.
	path := filepath.Join(home, "logs", "mcp-stderr.log")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := logfile.Open(path, logfile.Options{MaxBytes: fi.Size() + 80})
	if err != nil {
		t.Fatal(err)
	}
	lw := logfile.NewLineWriter(f, "test", logfile.NewLimiter(1000, 1000))
	lw.Stamp = logfile.SourceStamp("alpha")
	for _, l := range []string{"before the rotation, a line long enough to pass the size\n", "after the rotation\n"} {
		if _, err := lw.Write([]byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	lw.Close()
	f.Close()
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Fatalf("the log was not rotated: %v", err)
	}
	testwait.For(t, time.Minute, "the lines across the rotation", func() bool {
		return strings.Contains(out.String(), "before the rotation") && strings.Contains(out.String(), "[stderr] after the rotation")
	})
	sigs <- syscall.SIGINT
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("logs -f did not end on Ctrl-C")
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Errorf("-f shows a raw escape:\n%q", out.String())
	}
}
