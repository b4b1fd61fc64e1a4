package cli

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// openPage opens a URL-mode page: with $BROWSER when it is set, waiting
// up to browserStartWait for it (a one-shot command must not end before
// the browser took the page: its end would hang up the terminal's
// process group), else with the system's browser (termUI.OpenURL). An
// error means the page was not opened, and the URL is shown instead.
func openPage(e *env, ctx context.Context, rawURL string) error {
	words := strings.Fields(getenv(e, "BROWSER"))
	if len(words) == 0 {
		return (&termUI{p: e.p, out: e.err, in: e.input, getenv: func(a0 string) string { return getenv(e, a0) }}).OpenURL(ctx, rawURL)
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
func warnOnce(e *env, key, msg string) { e.f.WarnOnce(key, msg) }
