//go:build unix

package testpty

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Timeout bounds every wait of a terminal test: for text to show, for a
// program to exit. It is generous because a loaded CI machine running the
// race detector is slow; a passing test never waits that long.
const Timeout = 60 * time.Second

// drainGrace is how long, once a program has exited or the test ends, the
// reader may take to collect the last output. Closing a terminal does not
// always wake a read blocked on it, and a failed test must still end.
const drainGrace = 2 * time.Second

// Keys as a terminal sends them.
const (
	KeyUp    = "\x1b[A"
	KeyDown  = "\x1b[B"
	KeyEnter = "\r"
	KeyEsc   = "\x1b"
	KeyCtrlC = "\x03"
	KeyCtrlD = "\x04"
)

// Term is a pseudo-terminal with everything it has shown recorded.
type Term struct {
	t      testing.TB
	master *os.File
	tty    *os.File // the far end, for Open; nil for Start

	mu      sync.Mutex
	out     bytes.Buffer
	changed chan struct{} // closed (and replaced) when output arrives
	ended   chan struct{} // closed when the output ended

	cmd    *exec.Cmd
	exited chan struct{} // closed when the program ended (Start only)
	err    error         // the program's exit, after exited
}

// Open opens a rows x cols pseudo-terminal for code in the test process:
// hand it TTY() as its input and output. The test is skipped when the
// system has no pseudo-terminals.
func Open(t testing.TB, rows, cols uint16) *Term {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	tm := newTerm(t, master)
	tm.tty = tty
	tm.Resize(rows, cols)
	go tm.read()
	t.Cleanup(func() {
		_ = tty.Close()
		_ = master.Close()
		tm.drain()
	})
	return tm
}

// Start runs cmd on a new rows x cols pseudo-terminal as its stdin, stdout
// and stderr. The test is skipped when the system has no pseudo-terminals.
// A program still running when the test ends is killed.
func Start(t testing.TB, cmd *exec.Cmd, rows, cols uint16) *Term {
	t.Helper()
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: rows, Cols: cols})
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	tm := newTerm(t, master)
	tm.cmd = cmd
	tm.exited = make(chan struct{})
	go tm.read()
	go func() {
		tm.err = cmd.Wait()
		close(tm.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-tm.exited:
		default:
			_ = cmd.Process.Kill()
			<-tm.exited
		}
		_ = master.Close()
		tm.drain()
	})
	return tm
}

func newTerm(t testing.TB, master *os.File) *Term {
	return &Term{t: t, master: master, changed: make(chan struct{}), ended: make(chan struct{})}
}

// termQueries are the queries a real terminal answers: background colour
// (OSC 11) and cursor position (DSR).
var termQueries = regexp.MustCompile(`\x1b\]11;\?(?:\x1b\\|\x07)|\x1b\[6n`)

// read records the output until it ends, and answers terminal queries the
// way a real terminal does, so a program waiting for a reply goes on.
func (tm *Term) read() {
	defer func() {
		tm.mu.Lock()
		close(tm.ended)
		tm.mu.Unlock()
	}()
	buf := make([]byte, 4096)
	answered := 0
	for {
		n, err := tm.master.Read(buf)
		tm.mu.Lock()
		tm.out.Write(buf[:n])
		all := tm.out.String()
		if n > 0 {
			close(tm.changed)
			tm.changed = make(chan struct{})
		}
		tm.mu.Unlock()
		for _, q := range termQueries.FindAllString(all, -1)[answered:] {
			answered++
			reply := "\x1b[1;1R"
			if strings.HasPrefix(q, "\x1b]11") {
				reply = "\x1b]11;rgb:0000/0000/0000\x1b\\"
			}
			_, _ = tm.master.WriteString(reply)
		}
		if err != nil {
			return
		}
	}
}

// drain waits a moment for the reader to collect the last output.
func (tm *Term) drain() {
	select {
	case <-tm.ended:
	case <-time.After(drainGrace):
	}
}

// TTY is the terminal end to hand to the code under test (Open only).
func (tm *Term) TTY() *os.File {
	if tm.tty == nil {
		tm.t.Fatal("testpty: TTY of a terminal a program runs on")
	}
	return tm.tty
}

// Resize sets the terminal size.
func (tm *Term) Resize(rows, cols uint16) {
	tm.t.Helper()
	if err := pty.Setsize(tm.master, &pty.Winsize{Rows: rows, Cols: cols}); err != nil {
		tm.t.Fatalf("resizing the terminal: %v", err)
	}
}

// Output is everything the terminal has shown so far.
func (tm *Term) Output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

// WaitFor waits until the output contains s, failing the test when the
// output ends or Timeout passes first.
func (tm *Term) WaitFor(s string) {
	tm.t.Helper()
	timeout := time.NewTimer(Timeout)
	defer timeout.Stop()
	for {
		tm.mu.Lock()
		found := strings.Contains(tm.out.String(), s)
		changed, ended := tm.changed, tm.ended
		tm.mu.Unlock()
		if found {
			return
		}
		select {
		case <-changed:
		case <-ended:
			if strings.Contains(tm.Output(), s) {
				return
			}
			tm.t.Fatalf("the terminal closed before showing %q; output:\n%q", s, tm.Output())
		case <-timeout.C:
			tm.t.Fatalf("timed out after %v waiting for %q; output so far:\n%q", Timeout, s, tm.Output())
		}
	}
}

// Press types keys, each key in one write, in order. Programs read them as
// they come, so a test waits (WaitFor) only for what it must see before
// typing on. A lone ESC is told from the start of an escape sequence by the
// pause after it, so it must be the last key of a Press.
func (tm *Term) Press(keys ...string) {
	tm.t.Helper()
	for i, k := range keys {
		if k == KeyEsc && i < len(keys)-1 {
			tm.t.Fatalf("testpty: a lone ESC must be the last key of a Press (keys %q)", keys)
			return
		}
		if _, err := tm.master.WriteString(k); err != nil {
			tm.t.Fatalf("typing %q: %v", k, err)
			return
		}
	}
}

// Wait waits for the program (Start only) to exit and returns its exit
// code, failing the test when it runs past Timeout or could not be waited
// for. The output the program left is collected first.
func (tm *Term) Wait() int {
	tm.t.Helper()
	if tm.exited == nil {
		tm.t.Fatal("testpty: Wait on a terminal no program was started on")
	}
	select {
	case <-tm.exited:
	case <-time.After(Timeout):
		tm.t.Fatalf("%s did not exit within %v; output:\n%q", tm.cmd.Path, Timeout, tm.Output())
	}
	tm.drain()
	var ee *exec.ExitError
	if errors.As(tm.err, &ee) {
		return ee.ExitCode()
	}
	if tm.err != nil {
		tm.t.Fatal(tm.err)
	}
	return 0
}
