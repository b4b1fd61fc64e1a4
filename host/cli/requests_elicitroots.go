package cli

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/elicit"
	"github.com/hermes-agent/hermes/host/termsafe"
)

// openPage opens a URL-mode page: with $BROWSER when it is set, waiting
// up to browserStartWait for it (a one-shot command must not end before
// the browser took the page: its end would hang up the terminal's
// process group), else with the system's browser (termUI.OpenURL). An
// error means the page was not opened, and the URL is shown instead.
func (e *env) openPage(ctx context.Context, rawURL string) error {
	words := strings.Fields(e.getenv("BROWSER"))
	if len(words) == 0 {
		return (&termUI{p: e.p, out: e.err, in: e.input, getenv: e.getenv}).OpenURL(ctx, rawURL)
	}
	cmd := exec.Command(words[0], append(words[1:], rawURL)...)
	// Stdin, Stdout and Stderr stay nil: /dev/null.
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting $BROWSER (%s): %w", words[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(browserStartWait)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}

// warnOnce prints a warning (and logs it) once per run and key.
func (e *env) warnOnce(key, msg string) { e.f.WarnOnce(key, msg) }

// termPrompter is the person at this terminal (elicit.Prompter): it writes
// to stderr, so that a command's output stays clean, and reads stdin's
// lines through the run's one reader.
type termPrompter struct {
	in   *inputSource
	out  io.Writer
	turn chan struct{} // held by the conversation in progress
}

// Converse runs fn once no other conversation holds the terminal.
func (p *termPrompter) Converse(ctx context.Context, fn func(elicit.Terminal) error) error {
	if !p.in.terminal() {
		return elicit.ErrNoPerson
	}
	select {
	case p.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.turn }()
	return fn(p)
}

// Say prints text (escaped once more: it is a server's, shown).
func (p *termPrompter) Say(text string) {
	fmt.Fprintln(p.out, termsafe.EscapeText(text))
}

// Ask prints prompt and reads a line of at most elicit.MaxAnswerBytes.
func (p *termPrompter) Ask(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(p.out, termsafe.Escape(prompt))
	line, err := p.in.readLine(ctx, elicit.MaxAnswerBytes)
	if err != nil {
		fmt.Fprintln(p.out)
		return "", err
	}
	return strings.TrimRight(line, "\r"), nil
}
