//go:build unix

package ui

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// ttyPair is a pseudo-terminal for driving the Printer like a person would.
type ttyPair struct {
	t      *testing.T
	master *os.File
	tty    *os.File

	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

// openPTY opens a 80x24 pseudo-terminal and drains its output.
func openPTY(t *testing.T) *ttyPair {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := pty.Setsize(master, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	p := &ttyPair{t: t, master: master, tty: tty, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = tty.Close()
		_ = master.Close()
		// Closing a terminal does not always wake a read blocked on it; a
		// failed test must still end rather than hang here.
		select {
		case <-p.done:
		case <-time.After(2 * time.Second):
		}
	})
	return p
}

// output returns everything the terminal has shown so far.
func (p *ttyPair) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitFor waits until the terminal output contains s.
func (p *ttyPair) waitFor(s string) {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.output(), s) {
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %q; output so far:\n%q", s, p.output())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// press writes keystrokes to the terminal, one key at a time.
func (p *ttyPair) press(keys ...string) {
	p.t.Helper()
	for _, k := range keys {
		if _, err := p.master.WriteString(k); err != nil {
			p.t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// printer returns a Printer reading and writing the terminal.
func (p *ttyPair) printer() *Printer {
	return New(p.tty, io.Discard, p.tty)
}

const (
	keyUp    = "\x1b[A"
	keyDown  = "\x1b[B"
	keyEnter = "\r"
	keyEsc   = "\x1b"
	keyCtrlC = "\x03"
	keyCtrlD = "\x04"
)

type result[T any] struct {
	v   T
	err error
}

// run calls f in a goroutine and returns a channel with its result.
func run[T any](f func() (T, error)) <-chan result[T] {
	ch := make(chan result[T], 1)
	go func() {
		v, err := f()
		ch <- result[T]{v, err}
	}()
	return ch
}

// wait returns the result or fails after a timeout.
func wait[T any](t *testing.T, ch <-chan result[T]) (T, error) {
	t.Helper()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-time.After(30 * time.Second):
		t.Fatal("timed out waiting for the prompt to return")
		panic("unreachable")
	}
}

func TestColorOnTerminal(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm-256color")
	tp := openPTY(t)
	p := tp.printer()
	if !p.Interactive() || !p.Color() {
		t.Fatalf("pty: Interactive=%v Color=%v, want true", p.Interactive(), p.Color())
	}
	p.OK("done")
	tp.waitFor("\x1b[32m✓ done\x1b[0m")
}

func TestNoColorEnv(t *testing.T) {
	for _, env := range []struct{ name, value string }{{"NO_COLOR", "1"}, {"TERM", "dumb"}} {
		t.Run(env.name, func(t *testing.T) {
			t.Setenv("TERM", "xterm")
			t.Setenv(env.name, env.value)
			tp := openPTY(t)
			p := tp.printer()
			if p.Color() {
				t.Fatal("colour on")
			}
			p.Warn("careful")
			p.Table([]string{"Status"}, [][]string{{"✓ enabled"}})
			p.Line("end")
			tp.waitFor("end")
			if strings.Contains(tp.output(), "\x1b") {
				t.Errorf("escape sequence in output %q", tp.output())
			}
		})
	}
}

func TestConfirmOnTerminal(t *testing.T) {
	cases := []struct {
		name       string
		input      string
		defaultYes bool
		want       bool
	}{
		{"no", "n\n", true, false},
		{"yes", "yes\n", false, true},
		{"empty default yes", "\n", true, true},
		{"empty default no", "\n", false, false},
		{"eof default yes", keyCtrlD, true, true},
		{"eof default no", keyCtrlD, false, false},
		{"other answer", "maybe\n", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp := openPTY(t)
			p := tp.printer()
			ch := run(func() (bool, error) { return p.Confirm("Remove server 'x'?", c.defaultYes), nil })
			hint := "[y/N] "
			if c.defaultYes {
				hint = "[Y/n] "
			}
			tp.waitFor("  Remove server 'x'? " + hint)
			tp.press(c.input)
			if got, _ := wait(t, ch); got != c.want {
				t.Errorf("Confirm = %v, want %v", got, c.want)
			}
		})
	}
}

func TestConfirmReadsOnlyOneLine(t *testing.T) {
	tp := openPTY(t)
	p := tp.printer()
	ch := run(func() (bool, error) { return p.Confirm("First?", true), nil })
	tp.waitFor("First? [Y/n] ")
	tp.press("n\nsecond answer\n")
	if got, _ := wait(t, ch); got {
		t.Fatal("Confirm = true, want false")
	}
	v, err := wait(t, run(func() (string, error) { return p.Ask("Name", "") }))
	if err != nil || v != "second answer" {
		t.Errorf("Ask after Confirm = %q, %v", v, err)
	}
}

func TestAskOnTerminal(t *testing.T) {
	tp := openPTY(t)
	p := tp.printer()
	ch := run(func() (string, error) { return p.Ask("Server name:", "alpha") })
	tp.waitFor("  Server name [alpha]: ")
	tp.press("  beta \n")
	if v, err := wait(t, ch); v != "beta" || err != nil {
		t.Errorf("Ask = %q, %v; want beta", v, err)
	}
	ch = run(func() (string, error) { return p.Ask("Again", "alpha") })
	tp.waitFor("Again [alpha]: ")
	tp.press("\n")
	if v, err := wait(t, ch); v != "alpha" || err != nil {
		t.Errorf("Ask empty = %q, %v; want alpha", v, err)
	}
}

func TestSecretHidesInput(t *testing.T) {
	tp := openPTY(t)
	p := tp.printer()
	ch := run(func() (string, error) { return p.Secret("API key / Bearer token") })
	tp.waitFor("  API key / Bearer token: ")
	tp.press("sk-live-", "SUPERSECRET", "X\x7f", keyUp, "9", keyEnter)
	v, err := wait(t, ch)
	if err != nil || v != "sk-live-SUPERSECRET9" {
		t.Fatalf("Secret = %q, %v; want sk-live-SUPERSECRET9", v, err)
	}
	p.Line("after")
	tp.waitFor("after")
	if out := tp.output(); strings.Contains(out, "SUPERSECRET") || strings.Contains(out, "sk-live") {
		t.Errorf("secret echoed: %q", out)
	}
	if !strings.Contains(tp.output(), "token: \r\n  after") {
		t.Errorf("no line break after the hidden input: %q", tp.output())
	}
	if !echoOn(t, tp.tty) {
		t.Error("terminal echo not restored")
	}
}

func TestSecretCtrlCCancels(t *testing.T) {
	tp := openPTY(t)
	p := tp.printer()
	ch := run(func() (string, error) { return p.Secret("Token") })
	tp.waitFor("Token: ")
	tp.press("abc", keyCtrlC)
	if _, err := wait(t, ch); !errors.Is(err, ErrCancelled) {
		t.Fatalf("err = %v, want ErrCancelled", err)
	}
	if !echoOn(t, tp.tty) {
		t.Error("terminal echo not restored")
	}
}

func tools(checked bool) []ChecklistItem {
	return []ChecklistItem{
		{Key: "read_file", Label: "read_file", Description: "Read a file", Checked: checked},
		{Key: "write_file", Label: "write_file", Description: "Write a file", Checked: checked},
		{Key: "list_dir", Description: "List a directory", Checked: checked},
	}
}

func runChecklist(t *testing.T, items []ChecklistItem, keys ...string) ([]string, error) {
	t.Helper()
	tp := openPTY(t)
	p := tp.printer()
	ch := run(func() ([]string, error) { return p.Checklist("Select tools for 'fs'", items) })
	tp.waitFor("enter confirm")
	tp.waitFor("selected")
	tp.press(keys...)
	keys, err := wait(t, ch)
	if !echoOn(t, tp.tty) {
		t.Error("terminal not restored after the checklist")
	}
	return keys, err
}

func TestChecklistUncheckSecond(t *testing.T) {
	got, err := runChecklist(t, tools(true), keyDown, " ", keyEnter)
	if err != nil {
		t.Fatal(err)
	}
	if want := "read_file,list_dir"; strings.Join(got, ",") != want {
		t.Errorf("keys = %v, want %s", got, want)
	}
}

func TestChecklistConfirmUnchanged(t *testing.T) {
	items := tools(false)
	items[2].Checked = true
	got, err := runChecklist(t, items, keyEnter)
	if err != nil || strings.Join(got, ",") != "list_dir" {
		t.Errorf("keys = %v, %v; want [list_dir]", got, err)
	}
}

func TestChecklistVimKeysAndToggleAll(t *testing.T) {
	// a: all on; j j x: third off; k space: second off; a: all on again;
	// a: all off; j space: second on.
	got, err := runChecklist(t, tools(false), "a", "j", "j", "x", "k", " ", "a", "a", "g", "j", " ", keyUp, keyEnter)
	if err != nil {
		t.Fatal(err)
	}
	if want := "write_file"; strings.Join(got, ",") != want {
		t.Errorf("keys = %v, want %s", got, want)
	}
}

func TestChecklistNoneChecked(t *testing.T) {
	got, err := runChecklist(t, tools(true), "a", keyEnter)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("keys = %#v, %v; want empty non-nil", got, err)
	}
}

func TestChecklistEscCancels(t *testing.T) {
	if _, err := runChecklist(t, tools(true), " ", keyEsc); !errors.Is(err, ErrCancelled) {
		t.Errorf("err = %v, want ErrCancelled", err)
	}
}

func TestChecklistCtrlCCancels(t *testing.T) {
	if _, err := runChecklist(t, tools(true), keyCtrlC); !errors.Is(err, ErrCancelled) {
		t.Errorf("err = %v, want ErrCancelled", err)
	}
}

func TestChecklistEmpty(t *testing.T) {
	tp := openPTY(t)
	got, err := tp.printer().Checklist("Nothing", nil)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("keys = %#v, %v; want empty non-nil", got, err)
	}
}
