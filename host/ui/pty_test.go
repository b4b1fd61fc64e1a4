//go:build unix

package ui

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testpty"
)

// openPTY opens an 80x24 pseudo-terminal for driving the Printer like a
// person would.
func openPTY(t *testing.T) *testpty.Term {
	t.Helper()
	return testpty.Open(t, 24, 80)
}

// printerOn returns a Printer reading and writing the terminal.
func printerOn(tp *testpty.Term) *Printer {
	return New(tp.TTY(), io.Discard, tp.TTY())
}

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
	case <-time.After(testpty.Timeout):
		t.Fatal("timed out waiting for the prompt to return")
		panic("unreachable")
	}
}

func TestColorOnTerminal(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm-256color")
	tp := openPTY(t)
	p := printerOn(tp)
	if !p.Interactive() || !p.Color() {
		t.Fatalf("pty: Interactive=%v Color=%v, want true", p.Interactive(), p.Color())
	}
	p.OK("done")
	tp.WaitFor("\x1b[32m✓ done\x1b[0m")
}

func TestNoColorEnv(t *testing.T) {
	for _, env := range []struct{ name, value string }{{"NO_COLOR", "1"}, {"TERM", "dumb"}} {
		t.Run(env.name, func(t *testing.T) {
			t.Setenv("TERM", "xterm")
			t.Setenv(env.name, env.value)
			tp := openPTY(t)
			p := printerOn(tp)
			if p.Color() {
				t.Fatal("colour on")
			}
			p.Warn("careful")
			p.Table([]string{"Status"}, [][]string{{"✓ enabled"}})
			p.Line("end")
			tp.WaitFor("end")
			if strings.Contains(tp.Output(), "\x1b") {
				t.Errorf("escape sequence in output %q", tp.Output())
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
		{"eof default yes", testpty.KeyCtrlD, true, true},
		{"eof default no", testpty.KeyCtrlD, false, false},
		{"other answer", "maybe\n", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp := openPTY(t)
			p := printerOn(tp)
			ch := run(func() (bool, error) { return p.Confirm("Remove server 'x'?", c.defaultYes), nil })
			hint := "[y/N] "
			if c.defaultYes {
				hint = "[Y/n] "
			}
			tp.WaitFor("  Remove server 'x'? " + hint)
			tp.Press(c.input)
			if got, _ := wait(t, ch); got != c.want {
				t.Errorf("Confirm = %v, want %v", got, c.want)
			}
		})
	}
}

func TestConfirmReadsOnlyOneLine(t *testing.T) {
	tp := openPTY(t)
	p := printerOn(tp)
	ch := run(func() (bool, error) { return p.Confirm("First?", true), nil })
	tp.WaitFor("First? [Y/n] ")
	tp.Press("n\nsecond answer\n")
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
	p := printerOn(tp)
	ch := run(func() (string, error) { return p.Ask("Server name:", "alpha") })
	tp.WaitFor("  Server name [alpha]: ")
	tp.Press("  beta \n")
	if v, err := wait(t, ch); v != "beta" || err != nil {
		t.Errorf("Ask = %q, %v; want beta", v, err)
	}
	ch = run(func() (string, error) { return p.Ask("Again", "alpha") })
	tp.WaitFor("Again [alpha]: ")
	tp.Press("\n")
	if v, err := wait(t, ch); v != "alpha" || err != nil {
		t.Errorf("Ask empty = %q, %v; want alpha", v, err)
	}
}

func TestSecretHidesInput(t *testing.T) {
	tp := openPTY(t)
	p := printerOn(tp)
	ch := run(func() (string, error) { return p.Secret("API key / Bearer token") })
	tp.WaitFor("  API key / Bearer token: ")
	tp.Press("sk-live-", "SUPERSECRET", "X\x7f", testpty.KeyUp, "9", testpty.KeyEnter)
	v, err := wait(t, ch)
	if err != nil || v != "sk-live-SUPERSECRET9" {
		t.Fatalf("Secret = %q, %v; want sk-live-SUPERSECRET9", v, err)
	}
	p.Line("after")
	tp.WaitFor("after")
	if out := tp.Output(); strings.Contains(out, "SUPERSECRET") || strings.Contains(out, "sk-live") {
		t.Errorf("secret echoed: %q", out)
	}
	if !strings.Contains(tp.Output(), "token: \r\n  after") {
		t.Errorf("no line break after the hidden input: %q", tp.Output())
	}
	if !echoOn(t, tp.TTY()) {
		t.Error("terminal echo not restored")
	}
}

func TestSecretCtrlCCancels(t *testing.T) {
	tp := openPTY(t)
	p := printerOn(tp)
	ch := run(func() (string, error) { return p.Secret("Token") })
	tp.WaitFor("Token: ")
	tp.Press("abc", testpty.KeyCtrlC)
	if _, err := wait(t, ch); !errors.Is(err, ErrCancelled) {
		t.Fatalf("err = %v, want ErrCancelled", err)
	}
	if !echoOn(t, tp.TTY()) {
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
	p := printerOn(tp)
	ch := run(func() ([]string, error) { return p.Checklist("Select tools for 'fs'", items) })
	tp.WaitFor("enter confirm")
	tp.WaitFor("selected")
	tp.Press(keys...)
	keys, err := wait(t, ch)
	if !echoOn(t, tp.TTY()) {
		t.Error("terminal not restored after the checklist")
	}
	return keys, err
}

func TestChecklistUncheckSecond(t *testing.T) {
	got, err := runChecklist(t, tools(true), testpty.KeyDown, " ", testpty.KeyEnter)
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
	got, err := runChecklist(t, items, testpty.KeyEnter)
	if err != nil || strings.Join(got, ",") != "list_dir" {
		t.Errorf("keys = %v, %v; want [list_dir]", got, err)
	}
}

func TestChecklistVimKeysAndToggleAll(t *testing.T) {
	// a: all on; j j x: third off; k space: second off; a: all on again;
	// a: all off; j space: second on.
	got, err := runChecklist(t, tools(false), "a", "j", "j", "x", "k", " ", "a", "a", "g", "j", " ", testpty.KeyUp, testpty.KeyEnter)
	if err != nil {
		t.Fatal(err)
	}
	if want := "write_file"; strings.Join(got, ",") != want {
		t.Errorf("keys = %v, want %s", got, want)
	}
}

func TestChecklistNoneChecked(t *testing.T) {
	got, err := runChecklist(t, tools(true), "a", testpty.KeyEnter)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("keys = %#v, %v; want empty non-nil", got, err)
	}
}

func TestChecklistEscCancels(t *testing.T) {
	if _, err := runChecklist(t, tools(true), " ", testpty.KeyEsc); !errors.Is(err, ErrCancelled) {
		t.Errorf("err = %v, want ErrCancelled", err)
	}
}

func TestChecklistCtrlCCancels(t *testing.T) {
	if _, err := runChecklist(t, tools(true), testpty.KeyCtrlC); !errors.Is(err, ErrCancelled) {
		t.Errorf("err = %v, want ErrCancelled", err)
	}
}

func TestChecklistEmpty(t *testing.T) {
	tp := openPTY(t)
	got, err := printerOn(tp).Checklist("Nothing", nil)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("keys = %#v, %v; want empty non-nil", got, err)
	}
}
