package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/plugins/stdio/internal/launchertest"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/sdktest"
	"github.com/hermes-agent/hermes/sdk/transport"
)

func TestMain(m *testing.M) {
	playRole()
	sdktest.ServeReferenceIfAsked()
	// The servers these tests start in process are launched by
	// hermes-stdio-launcher, found beside the running executable.
	if err := launchertest.BuildBesideTest(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// The built plugin passes the whole contract check against a real server.
func TestContract(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hermes-transport-stdio")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	if err := launchertest.Build(filepath.Dir(bin)); err != nil {
		t.Fatal(err)
	}
	cmd, env := sdktest.ReferenceCommand()
	sdktest.CheckTransport(t, bin, transport.Config{Server: "ref", Transport: "stdio", Command: cmd, Env: env})
}

// fakeHost records warnings.
type fakeHost struct {
	mu       sync.Mutex
	warnings []*sdk.Error
}

func (h *fakeHost) Headers(context.Context, transport.HeadersRequest) (map[string]string, error) {
	return nil, nil
}

func (h *fakeHost) Challenge(context.Context, transport.ChallengeRequest) (transport.ChallengeAnswer, error) {
	return transport.ChallengeAnswer{}, sdk.NewError(sdk.CodeAuth, "a stdio server has no challenges")
}

func (h *fakeHost) Warn(w *sdk.Error) {
	h.mu.Lock()
	h.warnings = append(h.warnings, w)
	h.mu.Unlock()
}

func (h *fakeHost) codes() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, w := range h.warnings {
		out = append(out, w.Code)
	}
	return out
}

// sh starts a shell script as the server, in process (no plugin).
func sh(t *testing.T, script string, max uint64) (*conn, *fakeHost) {
	t.Helper()
	h := &fakeHost{}
	cfg := transport.Config{Server: "s", Command: "sh", Args: []string{"-c", script},
		Env: []string{"PATH=" + os.Getenv("PATH")}, MaxMessageBytes: max,
		StderrLog: filepath.Join(t.TempDir(), "stderr.log")}
	c, err := start(context.Background(), cfg, h, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.cmd.Process.Kill() })
	return c, h
}

// Lines are returned as written, without decoding; non-JSON is skipped
// with one warning; blank lines are skipped; a last line without newline
// counts.
func TestReadMovesBytes(t *testing.T) {
	c, h := sh(t, `printf 'not json\n\n  {"a": 1 , "b":"ü"}  \nnoise again\n{"last":true}'`, 0)
	got, err := c.Read(context.Background())
	if err != nil || string(got) != `{"a": 1 , "b":"ü"}` {
		t.Fatalf("first message = %q, %v", got, err)
	}
	got, err = c.Read(context.Background())
	if err != nil || string(got) != `{"last":true}` {
		t.Fatalf("second message = %q, %v", got, err)
	}
	if _, err := c.Read(context.Background()); sdk.ErrorCode(err) != sdk.CodeClosed || !strings.Contains(err.Error(), "non-JSON") {
		t.Fatalf("end = %v; want a closed error that mentions the non-JSON output", err)
	}
	if codes := h.codes(); len(codes) != 1 || codes[0] != sdk.CodeGarbage {
		t.Fatalf("warnings = %v, want one garbage warning", codes)
	}
}

// Lines longer than the read buffer arrive whole; a line over the limit
// ends the connection with a too_large error naming the key to raise.
func TestReadLimit(t *testing.T) {
	c, _ := sh(t, `x() { printf '{"big":"'; head -c $1 /dev/zero | tr '\0' x; printf '"}\n'; }; x 819200; x 2097152`, 1<<20)
	got, err := c.Read(context.Background())
	if err != nil || len(got) != (800<<10)+10 {
		t.Fatalf("a long message: %d bytes, %v", len(got), err)
	}
	_, err = c.Read(context.Background())
	if sdk.ErrorCode(err) != sdk.CodeTooLarge || !strings.Contains(err.Error(), "max_message_mb") {
		t.Fatalf("an oversized message: %v", err)
	}
}

// A long line is read into one buffer that becomes the message, not
// collected in parts and joined: reading a 3.5 MB line allocates well under
// twice its size (the parts and the join cost twice, and held both at once).
func TestReadLongLineOnce(t *testing.T) {
	const n = 3584 << 10
	c, _ := sh(t, `printf '{"big":"'; head -c `+strconv.Itoa(n)+` /dev/zero | tr '\0' x; printf '"}\n'`, 64<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := c.Read(context.Background())
	runtime.ReadMemStats(&after)
	if err != nil || len(got) != n+10 {
		t.Fatalf("a long message: %d bytes, %v", len(got), err)
	}
	// TotalAlloc counts the whole process: goroutines other tests left
	// winding down allocate a little meanwhile (it failed by 3.5 KB once,
	// under load), hence 256 KiB of slack beside the 1.6 times.
	if a := after.TotalAlloc - before.TotalAlloc; a > n*8/5+256<<10 {
		t.Fatalf("reading a %d-byte line allocated %d bytes; want at most 1.6 times the line (and 256 KiB for the rest of the process)", len(got), a)
	}
}

// A line that never ends is refused at the limit, and what was collected
// of it is let go.
func TestReadEndlessLine(t *testing.T) {
	c, _ := sh(t, `printf '{"data":"'; tr '\0' x </dev/zero`, 1<<20)
	_, err := c.Read(context.Background())
	if sdk.ErrorCode(err) != sdk.CodeTooLarge || !strings.Contains(err.Error(), "max_message_mb") {
		t.Fatalf("an endless line: %v", err)
	}
	if c.long != nil {
		t.Fatalf("%d bytes of the refused line are still held", len(c.long))
	}
}

// An exit is explained with its status and the last stderr line.
func TestExitReason(t *testing.T) {
	c, _ := sh(t, `echo "fatal: no API key" >&2; exit 7`, 0)
	_, err := c.Read(context.Background())
	if sdk.ErrorCode(err) != sdk.CodeClosed || !strings.Contains(err.Error(), "status 7") || !strings.Contains(err.Error(), "fatal: no API key") {
		t.Fatalf("exit reason = %v", err)
	}
}

// Write delivers the message and a newline; the server echoes it back.
func TestWriteRoundTrip(t *testing.T) {
	c, _ := sh(t, `while read -r line; do printf '%s\n' "$line"; done`, 0)
	for _, msg := range []string{`{"id":1}`, `{"big":"` + strings.Repeat("y", 100<<10) + `"}`} {
		if err := c.Write(context.Background(), []byte(msg)); err != nil {
			t.Fatal(err)
		}
		got, err := c.Read(context.Background())
		if err != nil || string(got) != msg {
			t.Fatalf("echoed %d bytes, %v; want %d", len(got), err, len(msg))
		}
	}
}

// Close escalates: a server that ignores stdin's end gets SIGTERM, one that
// ignores SIGTERM gets SIGKILL; Close returns once it is gone.
func TestCloseEscalates(t *testing.T) {
	for name, script := range map[string]string{
		"exits on stdin EOF": `cat >/dev/null`,
		"needs SIGTERM":      `trap 'exit 0' TERM; while :; do sleep 0.05; done`,
		"ignores SIGTERM":    `trap '' TERM; while :; do sleep 0.05; done`,
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := sh(t, script, 0)
			done := make(chan struct{})
			go func() { _ = c.Close(); close(done) }()
			select {
			case <-done:
			case <-time.After(stdinCloseGrace + sigtermGrace + 5*time.Second):
				t.Fatal("Close did not return")
			}
			select {
			case <-c.exited:
			default:
				t.Fatal("Close returned before the server exited")
			}
		})
	}
}

// A missing command says what to install.
func TestMissingCommand(t *testing.T) {
	_, err := start(context.Background(), transport.Config{Server: "s", Command: "npx", Env: []string{"PATH=" + t.TempDir()}}, &fakeHost{}, hclog.NewNullLogger())
	if sdk.ErrorCode(err) != sdk.CodeNotFound || !strings.Contains(err.Error(), "Node.js") {
		t.Fatalf("got %v", err)
	}
}
