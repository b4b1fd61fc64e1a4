package cmdkit

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// OpenPage opens a URL-mode page: with $BROWSER when it is set, waiting
// up to browserStartWait for it (a one-shot command must not end before
// the browser took the page: its end would hang up the terminal's
// process group), else with the system's browser (termUI.OpenURL). An
// error means the page was not opened, and the URL is shown instead.
func OpenPage(e *Env, ctx context.Context, rawURL string) error {
	words := strings.Fields(Getenv(e, "BROWSER"))
	if len(words) == 0 {
		return (&TermUI{P: e.P, Out: e.Err, In: e.Input, Getenv: Getter(e)}).OpenURL(ctx, rawURL)
	}
	cmd := exec.Command(words[0], append(words[1:], rawURL)...)
	// Stdin, Stdout and Stderr stay nil: /dev/null.
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting $BROWSER (%s): %w", words[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(BrowserStartWait)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}

// WarnOnce prints a warning (and logs it) once per run and key.
func WarnOnce(e *Env, key, msg string) { e.F.WarnOnce(key, msg) }
