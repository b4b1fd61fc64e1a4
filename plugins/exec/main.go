// Command hermes-auth-exec is the Hermes auth plugin of `auth: exec`: it
// runs a command that prints a bearer token (a cloud CLI's
// `gcloud auth print-access-token`, a secret manager's read command...) and
// sends that token to the MCP server, reusing it for exec.lifetime seconds.
//
// It is also the example to copy when writing an auth plugin of your own
// (hermes-auth-<name>): an Authenticator with its five methods, built by an
// opener from auth.Config, served by auth.Serve. It imports the sdk and the
// standard library only.
//
// Nothing is stored on disk: the token lives in the plugin's memory, and a
// token never appears in an error or a log line.
package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
)

func main() {
	log := sdk.NewPluginLogger("exec")
	// auth.Serve closes the message socket the host hands every plugin
	// (the auth kind has none), so the command does not inherit it.
	auth.Serve(func(_ context.Context, cfg auth.Config) (auth.Authenticator, error) {
		a, err := newExecAuth(cfg, log)
		if err != nil {
			return nil, err
		}
		return a, nil
	}, sdk.WithLogger(log))
}

// logger is the part of the sdk's hclog logger the plugin uses.
type logger interface {
	Debug(msg string, args ...any)
}

// execAuth is the Authenticator of one server.
type execAuth struct {
	server string
	s      *settings
	log    logger
	// ctx ends at Close, and with it every run of the command.
	ctx    context.Context
	cancel context.CancelFunc
	runs   sync.WaitGroup

	mu      sync.Mutex
	token   string    // the last token the command printed; "" before the first run and after Logout
	got     time.Time // when the run that printed it started
	expires time.Time // token is reused until then; zero once dropped
	run     *run      // the run in progress, shared by every caller
}

// run is one run of the command, which concurrent callers share.
type run struct {
	done    chan struct{}
	cancel  context.CancelFunc
	callers int // how many wait for it; the run stops when the last leaves
	token   string
	expires time.Time
	err     error
}

func newExecAuth(cfg auth.Config, log logger) (*execAuth, error) {
	s, err := parseSettings(cfg.Settings)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &execAuth{server: cfg.Server, s: s, log: log, ctx: ctx, cancel: cancel}, nil
}

// get returns the cached token while it is valid (unless fresh), else the
// token of a run of the command: the run in progress, or a new one.
func (a *execAuth) get(ctx context.Context, fresh bool) (string, time.Time, error) {
	a.mu.Lock()
	if !fresh && a.token != "" && time.Now().Before(a.expires) {
		tok, exp := a.token, a.expires
		a.mu.Unlock()
		return tok, exp, nil
	}
	r := a.run
	if r == nil {
		r = a.start()
	}
	r.callers++
	a.mu.Unlock()

	select {
	case <-r.done:
		return r.token, r.expires, r.err
	case <-ctx.Done():
		a.mu.Lock()
		if r.callers--; r.callers == 0 {
			// Nobody waits for this run any more: stop the command.
			r.cancel()
			if a.run == r {
				a.run = nil
			}
		}
		a.mu.Unlock()
		return "", time.Time{}, ctx.Err()
	}
}

// start starts a run of the command and makes it the current one; a.mu is
// held.
func (a *execAuth) start() *run {
	ctx, cancel := context.WithCancel(a.ctx)
	r := &run{done: make(chan struct{}), cancel: cancel}
	a.run = r
	a.runs.Add(1)
	go func() {
		defer a.runs.Done()
		defer cancel()
		// The token is reused for lifetime from when the command started:
		// it cannot be older than that.
		started := time.Now()
		tok, err := a.runCommand(ctx)
		a.mu.Lock()
		r.token, r.expires, r.err = tok, started.Add(a.s.lifetime), err
		// Cache the token, unless the run was abandoned or a logout came
		// meanwhile.
		if a.run == r {
			a.run = nil
			if err == nil {
				a.token, a.got, a.expires = tok, started, r.expires
			}
		}
		a.mu.Unlock()
		close(r.done)
	}()
	return r
}

// Headers returns the token in the configured header; the host reuses the
// headers until the token's lifetime ends.
func (a *execAuth) Headers(ctx context.Context, _ auth.HeadersRequest) (auth.Headers, error) {
	tok, exp, err := a.get(ctx, false)
	if err != nil {
		return auth.Headers{}, err
	}
	return a.headers(tok, exp), nil
}

// headers are the request headers carrying tok, valid until exp.
func (a *execAuth) headers(tok string, exp time.Time) auth.Headers {
	value := tok
	if strings.EqualFold(a.s.header, "Authorization") {
		value = "Bearer " + tok
	}
	return auth.Headers{Headers: map[string]string{a.s.header: value}, ValidUntil: exp}
}

// Challenge drops the refused token and runs the command again. The plugin
// cannot know which token the server refused; a new one is worth a retry,
// the same one again is not.
func (a *execAuth) Challenge(ctx context.Context, c auth.Challenge, _ auth.UI) (auth.Answer, error) {
	a.mu.Lock()
	refused := a.token
	a.expires = time.Time{}
	a.mu.Unlock()
	tok, exp, err := a.get(ctx, true)
	if err != nil {
		return auth.Answer{}, err
	}
	if tok == refused {
		return auth.Answer{}, sdk.NewError(sdk.CodeAuth, "the token from `%s` was refused (HTTP %d); check that the command prints a valid token for this server", a.s.shown, c.Status)
	}
	// The new headers come with the answer: the retry costs no other call.
	return auth.Answer{Retry: true, Headers: a.headers(tok, exp)}, nil
}

// Login runs the command once. There is nothing to ask the user; the UI is
// only told what happened. The old token stays in use if the run fails.
func (a *execAuth) Login(ctx context.Context, _ auth.LoginOptions, ui auth.UI) (auth.Status, error) {
	if _, _, err := a.get(ctx, true); err != nil {
		return auth.Status{}, err
	}
	if ui.Interactive() {
		n := auth.Notice{Text: fmt.Sprintf("Ran `%s`: it printed a token, which Hermes reuses for %s.", a.s.shown, a.s.lifetime)}
		if err := ui.Show(ctx, n); err != nil {
			a.log.Debug("showing the login notice failed", "server", a.server, "error", err)
		}
	}
	return a.Status(ctx)
}

// Logout forgets the token: there is nothing on disk, and nothing to
// revoke.
func (a *execAuth) Logout(context.Context) (auth.LogoutResult, error) {
	a.mu.Lock()
	// A run in progress still answers its callers, but is not cached.
	a.token, a.got, a.expires, a.run = "", time.Time{}, time.Time{}, nil
	a.mu.Unlock()
	return auth.LogoutResult{Detail: "forgot the token held in memory; exec stores nothing on disk (to sign out of the command itself, use its own tool)"}, nil
}

// Status describes the cached token, never showing it.
func (a *execAuth) Status(context.Context) (auth.Status, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return auth.Status{
		Method:      "exec",
		LoggedIn:    !a.expires.IsZero(),
		ExpiresAt:   a.expires,
		LastRefresh: a.got,
		CanRefresh:  true,
		Issuer:      a.s.shown,
		Detail:      fmt.Sprintf("runs the command for a token and reuses it for %s", a.s.lifetime),
	}, nil
}

// Close stops any run of the command; the sdk calls it when the plugin
// exits.
func (a *execAuth) Close() error {
	a.cancel()
	a.runs.Wait()
	return nil
}
