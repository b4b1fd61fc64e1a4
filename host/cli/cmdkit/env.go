package cmdkit

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/app"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/host/ui"
)

// Env is what every command shares: the run's streams and terminal, and
// its composition root (f, built by setup: everything else a command
// uses comes from there).
type Env struct {
	// ProbeTimeout bounds the probe of an install (--probe-timeout); 0
	// is probeConnectTimeout.
	ProbeTimeout time.Duration

	In      io.Reader
	Input   *InputSource // the one reader of stdin (in reads through it)
	Out     io.Writer
	Err     io.Writer
	P       *ui.Printer
	Verbose bool
	// F is the run's composition root, set once by setup (read through
	// Factory() where a signal may race with it); home and log are its
	// Home and Log.
	F    *app.Factory
	fMu  sync.Mutex
	Home string
	Log  hclog.Logger
	// Interrupted is set when SIGINT/SIGTERM arrived.
	Interrupted atomic.Bool
	// OnSignal, when set, sees SIGINT/SIGTERM first: a signal it takes
	// (hermes chat cancelling its running turn) does not end the run.
	OnSignal atomic.Pointer[SignalHook]
	// Opts are the run's Options (environment, working folder).
	Opts RunOptions
	// Prompt is the person at this terminal, for elicitation and the
	// chat's approvals: one per run, so that requests take turns.
	Prompt *TermPrompter
}

// LookupEnv returns the value of key in the run's environment.
func LookupEnv(e *Env, key string) (string, bool) {
	for i := len(e.Opts.Env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e.Opts.Env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Getenv returns the value of key in the run's environment, "" when unset.
func Getenv(e *Env, key string) string {
	v, _ := LookupEnv(e, key)
	return v
}

// Getter is Getenv of e as the function that packages reading an
// environment take.
func Getter(e *Env) func(string) string {
	return func(key string) string { return Getenv(e, key) }
}

// Setup builds the run's composition root; close undoes it.
func Setup(e *Env) {
	if Factory(e) != nil {
		return
	}
	e.Prompt = &TermPrompter{In: e.Input, Out: e.Err, Turn: make(chan struct{}, 1)}
	f := app.New(app.Options{
		Env: e.Opts.Env, Dir: e.Opts.Dir, Stderr: e.Err, Verbose: e.Verbose, OwnsProcess: e.Opts.OwnsProcess,
		Prompter: e.Prompt, Terminal: e.Input != nil && e.Input.Terminal(), OpenPage: func(ctx context.Context, url string) error { return OpenPage(e, ctx, url) },
		LoginUI: &TermUI{P: e.P, Out: e.Out, In: e.Input, Getenv: Getter(e)},
	})
	e.Home, e.Log = f.HomePath(), f.Log
	e.fMu.Lock()
	e.F = f
	e.fMu.Unlock()
}

// Factory returns the run's composition root once setup made it (nil
// before), safely from the signal handler.
func Factory(e *Env) *app.Factory {
	e.fMu.Lock()
	defer e.fMu.Unlock()
	return e.F
}

// RunSupervisor returns the run's runSupervisor once setup made it, else nil.
func RunSupervisor(e *Env) *supervisor.Supervisor {
	if f := Factory(e); f != nil {
		return f.Supervisor()
	}
	return nil
}

func CloseRun(e *Env) {
	if f := Factory(e); f != nil {
		f.Close(e.Interrupted.Load())
	}
}

// SignalHook is a command's own handling of SIGINT/SIGTERM (env.onSignal):
// fn reports whether it took the signal.
type SignalHook struct{ Fn func(os.Signal) bool }

// RunOptions are what of a run's Options the commands read.
type RunOptions struct {
	Env         []string
	Dir         string
	OwnsProcess bool
}
