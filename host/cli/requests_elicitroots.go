package cli

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/elicit"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/roots"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/termsafe"
)

// bindElicitRoots gives every server of a registry the host's elicitation
// handler (asking the person on this terminal, declining without one) and
// the roots (the working folder and roots: of config.yaml), on top of
// whatever handlers o already binds. It returns the roots: a long-lived
// command hooks its registry to them (set.OnChange calling
// Manager.NotifyRootsChanged) and calls set.Reload after a config reload
// or a change of working folder.
func (e *env) bindElicitRoots(o *registry.Options) *roots.Set {
	set := e.rootSet()
	prev := o.Requests
	o.Requests = func(srv *config.Server) registry.Requests {
		var r registry.Requests
		if prev != nil {
			r = prev(srv)
		}
		r.Elicitation = e.elicitHandler(srv)
		if !srv.NoRoots {
			r.Roots = set
		}
		return r
	}
	return set
}

// bindElicitRootsDeps is bindElicitRoots for a single session (hermes mcp
// test).
func (e *env) bindElicitRootsDeps(d *session.Deps, srv *config.Server) {
	d.Elicitation = e.elicitHandler(srv)
	if !srv.NoRoots {
		d.Roots = e.rootSet()
	}
}

// rootSet returns the roots offered to servers: the working folder, then
// roots: of config.yaml. A roots: that cannot be read is reported once and
// only the working folder is offered.
func (e *env) rootSet() *roots.Set {
	wd, err := e.workDir()
	if err != nil {
		wd = ""
	}
	home, _ := e.userHome()
	list, err := roots.Load(e.home, wd, home, e.configEnv())
	if err != nil {
		e.warnOnce("roots", fmt.Sprintf("%s; offering servers only the working folder as a root", oneLine(err.Error())))
		list, _ = roots.Resolve(wd, home, nil)
	}
	return roots.NewSet(list)
}

// elicitHandler returns srv's elicitation handler: its elicitation: block,
// the terminal when there is one (else every request is declined), and the
// browser for URL-mode pages. A wrong elicitation: block declines every
// request and says why once.
func (e *env) elicitHandler(srv *config.Server) *elicit.Handler {
	s, err := elicit.ParseSettings(srv.Name, srv.Elicitation)
	if err != nil {
		e.warnOnce("elicitation/"+srv.Name, fmt.Sprintf("%s; until then its elicitation requests are declined", oneLine(err.Error())))
		s.Enabled = false
	}
	var p elicit.Prompter
	if e.input != nil && e.input.terminal() {
		p = e.prompter()
	}
	var log hclog.Logger
	if e.log != nil {
		log = e.log.Named("elicitation")
	}
	return elicit.New(srv.Name, s, p, e.openPage, log)
}

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

var (
	warnedMu sync.Mutex
	warned   = map[*env]map[string]bool{}
	// prompters holds each run's terminal prompter: one per run, so
	// that the requests of every server take turns.
	prompters sync.Map // *env → *termPrompter
)

// warnOnce prints a warning (and logs it) once per run and key.
func (e *env) warnOnce(key, msg string) {
	warnedMu.Lock()
	if warned[e] == nil {
		warned[e] = map[string]bool{}
	}
	seen := warned[e][key]
	warned[e][key] = true
	warnedMu.Unlock()
	if seen {
		return
	}
	if e.log != nil {
		e.log.Warn(msg)
	}
	fmt.Fprintf(e.err, "Warning: %s\n", termsafe.Escape(msg))
}

func (e *env) prompter() *termPrompter {
	p, _ := prompters.LoadOrStore(e, &termPrompter{in: e.input, out: e.err, turn: make(chan struct{}, 1)})
	return p.(*termPrompter)
}

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
