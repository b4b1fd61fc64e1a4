// Package app is the composition root of one run of hermes (the shape of
// GitHub CLI's cmdutil.Factory): it builds, once and on first use, what
// commands share: the run's environment and home folder layout, the log,
// the plugin supervisor, the auth plugin managers, the store of what
// servers offered, the merged config, the provider of what servers ask of
// the host (sampling, elicitation, roots, the approval settings) bound to
// the run's prompter, the model client, and registries in the modes the
// commands need.
//
// A command takes the parts it uses from a Factory into its own Options and
// keeps no state of its own beyond its run. The package holds no global
// state: two runs in one process (the tests run commands side by side) each
// have their own Factory. It does not print to the terminal itself except
// for warnings (WarnOnce); the person is reached through what Options
// gives it (Prompter, LoginUI, OpenPage).
package app

import (
	"context"
	"fmt"
	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/sdk/auth"
	"io"
	"log"
	"os"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/credentials"
	"github.com/hermes-agent/hermes/host/elicit"
	"github.com/hermes-agent/hermes/host/homedir"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/hermes-agent/hermes/host/project"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/sdk/logfile"
)

// Options is what a run gives its Factory from outside.
type Options struct {
	// Env is the run's environment ("KEY=value"; the last of a key
	// wins); nil is the process's. Nothing below the Factory reads the
	// process environment when it is set.
	Env []string
	// Dir is the run's working folder; "" is the process's.
	Dir string
	// Stderr receives warnings (and the log with Verbose); nil discards.
	Stderr io.Writer
	// Verbose mirrors the log on Stderr, at debug level.
	Verbose bool
	// OwnsProcess routes what go-plugin writes to os.Stderr, and the
	// standard logger, into the run's log. Only the process's one run may.
	OwnsProcess bool
	// Prompter is the person at this run's terminal, for what servers ask
	// (elicitation) and the chat's approvals; nil: nobody, and requests
	// that need a person are declined.
	Prompter elicit.Prompter
	// Terminal says the run's stdin is a terminal: elicitation asks the
	// Prompter only then (and declines at once otherwise); the chat's
	// approvals ask it always, and it answers that nobody is there.
	Terminal bool
	// OpenPage opens a URL-mode elicitation page; nil shows the URL only.
	OpenPage func(ctx context.Context, url string) error
	// LoginUI relays an auth plugin's login steps to the person (a browser
	// to open, a code to show, a URL to paste) for login flows.
	LoginUI auth.UI
}

// Factory builds what one run needs. Its methods are safe for concurrent
// use; each part is built once.
type Factory struct {
	// Home is the run's home folder ($HERMES_HOME, else ~/.hermes).
	Home homedir.Dir
	// Log is the run's logger (hermes.log, and stderr with Verbose).
	Log hclog.Logger

	opts    Options
	logFile *logfile.File
	sup     *supervisor.Supervisor

	credsMu    sync.Mutex
	bgCreds    *credentials.Manager
	loginCreds *credentials.Manager

	warnMu sync.Mutex
	warned map[string]bool

	reqOnce sync.Once
	req     *Requests

	modelMu sync.Mutex
	model   *model.Client
}

// stderrRoute takes os.Stderr away from the terminal, once per process
// (see supervisor.StderrRoute).
var stderrRoute = sync.OnceValues(supervisor.RouteStderr)

// New opens the run's log and supervisor. Close undoes it.
func New(o Options) *Factory {
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	f := &Factory{opts: o, warned: map[string]bool{}}
	f.Home = homedir.From(f.Getenv)
	var sinks []io.Writer
	// The host log rotates by size (logfile.DefaultMaxBytes, keeping
	// logfile.DefaultBackups old files), however much is logged.
	if lf, err := logfile.Open(f.Home.HostLog(), logfile.Options{}); err == nil {
		f.logFile = lf
		sinks = append(sinks, lf)
	}
	level := hclog.Info
	if o.Verbose {
		sinks = append(sinks, o.Stderr)
		level = hclog.Debug
	}
	var w io.Writer = io.Discard
	if len(sinks) > 0 {
		// One line per entry, escaped: a server's log data or a plugin's
		// logger name cannot forge lines or reach the terminal as control.
		w = termsafe.LogWriter(io.MultiWriter(sinks...))
	}
	f.Log = hclog.New(&hclog.LoggerOptions{Name: "hermes", Level: level, Output: w})
	if o.OwnsProcess {
		// net/rpc logs through the standard logger; keep it in ours.
		log.SetOutput(f.Log.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}))
		log.SetFlags(0)
		// go-plugin's multiplexer (yamux) writes its errors to os.Stderr
		// itself: they go to the log too, and reach the terminal only
		// with -v. The route stays to the end of the process: plugins
		// stopped at the end of a command still make yamux complain.
		if rt, err := stderrRoute(); err == nil {
			rt.To(f.Log.Named("go-plugin"))
		}
	}
	if w := config.DotEnvWarning(f.HomePath()); w != "" {
		f.Log.Warn(w)
		fmt.Fprintf(o.Stderr, "Warning: %s\n", termsafe.Escape(w))
	}
	f.sup = supervisor.New(supervisor.Options{Home: f.HomePath(), Logger: f.Log, Env: f.Lookup})
	return f
}

// HomePath is the home folder as the packages that take a path want it.
func (f *Factory) HomePath() string { return string(f.Home) }

// Close stops what the run started: the auth plugins first (a transport
// still closing asks them nothing more), then every plugin (interrupted:
// as after SIGINT, letting servers end on their own first), and closes the
// log.
func (f *Factory) Close(interrupted bool) {
	f.closeRequests()
	f.closeCredentials()
	f.modelMu.Lock()
	if f.model != nil {
		f.model.Close()
	}
	f.modelMu.Unlock()
	if interrupted {
		f.sup.Interrupt()
	} else {
		f.sup.KillAll()
	}
	if f.logFile != nil {
		f.logFile.Close()
	}
}

// Supervisor is the run's plugin supervisor.
func (f *Factory) Supervisor() *supervisor.Supervisor { return f.sup }

// Environ is the run's environment as given (nil: the process's).
func (f *Factory) Environ() []string { return f.opts.Env }

// Lookup returns the value of key in the run's environment (none when the
// run was given none: a run reads the environment it is given).
func (f *Factory) Lookup(key string) (string, bool) {
	for i := len(f.opts.Env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(f.opts.Env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Getenv returns the value of key in the run's environment, "" when unset.
func (f *Factory) Getenv(key string) string {
	v, _ := f.Lookup(key)
	return v
}

// ConfigEnv is the run's environment for config's loaders: nil (the
// process's) when the run was given none.
func (f *Factory) ConfigEnv() func(string) (string, bool) {
	if f.opts.Env == nil {
		return nil
	}
	return f.Lookup
}

// UserHome returns the person's home folder: $HOME of the run's
// environment, else the process's.
func (f *Factory) UserHome() (string, error) {
	if h := f.Getenv("HOME"); h != "" {
		return h, nil
	}
	return os.UserHomeDir()
}

// WorkDir returns the run's working folder.
func (f *Factory) WorkDir() (string, error) {
	if f.opts.Dir != "" {
		return f.opts.Dir, nil
	}
	return os.Getwd()
}

// WarnOnce prints a warning on stderr (and logs it) once per run and key.
func (f *Factory) WarnOnce(key, msg string) {
	f.warnMu.Lock()
	seen := f.warned[key]
	f.warned[key] = true
	f.warnMu.Unlock()
	if seen {
		return
	}
	f.Log.Warn(msg)
	fmt.Fprintf(f.opts.Stderr, "Warning: %s\n", termsafe.Escape(msg))
}

// Offered is the store of what servers offered, under the home folder.
func (f *Factory) Offered() *offered.Store { return offered.Open(f.HomePath(), f.Log) }

// Config reads config.yaml with the run's environment and merges over it
// the servers the project of the working folder declares (project.Load).
// A project file that cannot be read leaves the user's config as it is,
// with a warning (once per run) naming the file.
func (f *Factory) Config() (*config.Config, error) {
	cfg, err := config.LoadEnv(f.HomePath(), f.ConfigEnv())
	if err != nil || cfg.SafeMode {
		return cfg, err
	}
	p, err := f.Project()
	if err != nil {
		f.WarnOnce("project", "project servers left out: "+strings.Join(strings.Fields(err.Error()), " "))
		return cfg, nil
	}
	project.Merge(cfg, p)
	return cfg, nil
}

// Project reads the project of the run's working folder; nil when there
// is none.
func (f *Factory) Project() (*project.Project, error) {
	dir, err := f.WorkDir()
	if err != nil {
		return nil, nil
	}
	userHome, _ := f.UserHome()
	return project.Load(dir, project.Options{Home: f.HomePath(), UserHome: userHome, Env: f.ConfigEnv()})
}

// Credentials is the background manager of auth plugins: no UI, so a
// server that needs a login is reported, never prompted for.
func (f *Factory) Credentials() *credentials.Manager {
	f.credsMu.Lock()
	defer f.credsMu.Unlock()
	if f.bgCreds == nil {
		f.bgCreds = credentials.New(credentials.Options{Home: f.HomePath(), Supervisor: f.sup, Logger: f.Log})
	}
	return f.bgCreds
}

// LoginCredentials is the manager of auth plugins for login flows: the
// run's LoginUI relays the plugins' steps, and a challenge may step up.
func (f *Factory) LoginCredentials() *credentials.Manager {
	f.credsMu.Lock()
	defer f.credsMu.Unlock()
	if f.loginCreds == nil {
		f.loginCreds = credentials.New(credentials.Options{Home: f.HomePath(), Supervisor: f.sup, Logger: f.Log, UI: f.opts.LoginUI, StepUp: true})
	}
	return f.loginCreds
}

// closeCredentials stops the auth plugins of both managers.
func (f *Factory) closeCredentials() {
	f.credsMu.Lock()
	bg, lg := f.bgCreds, f.loginCreds
	f.credsMu.Unlock()
	for _, m := range []*credentials.Manager{lg, bg} {
		if m != nil {
			m.Close()
		}
	}
}
