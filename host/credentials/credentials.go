// Package credentials owns the auth plugin (hermes-auth-<method>) of each
// server that has an auth: method: it starts one plugin process per server
// on first use, answers the transport plugin's header and challenge
// callbacks from it (caching headers while the plugin says they are
// valid), and runs logins, logouts and status queries, relaying the
// plugin's interactive steps to a UI the caller supplies.
//
// It never sees a token's value beyond handing headers to the transport,
// and never logs one. It must not read or write the terminal itself: the
// UI does.
package credentials

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// OpenTimeout bounds starting an auth plugin and opening its
// Authenticator.
const OpenTimeout = 30 * time.Second

// Manager starts and keeps the auth plugins of a host's servers. Its zero
// value is not usable; build it with New.
type Manager struct {
	home string
	sup  *supervisor.Supervisor
	log  hclog.Logger
	ui   auth.UI
	// stepUp lets a challenge use the UI (an interactive step-up).
	stepUp bool
	// tokenDir and seal, when set, replace every server's token folder and
	// seal its files (Options.TokenDir, Options.Seal).
	tokenDir string
	seal     *auth.Seal

	mu      sync.Mutex
	servers map[string]*Server
	closed  bool
}

// Options configure a Manager.
type Options struct {
	// Home is the Hermes home; tokens live in Home/mcp-tokens.
	Home       string
	Supervisor *supervisor.Supervisor
	Logger     hclog.Logger
	// UI answers the plugins' interactive steps; nil for none (background
	// work: a server that needs a login is reported as such).
	UI auth.UI
	// StepUp lets a challenge during a request log in again through UI
	// (more scope); otherwise only Login does.
	StepUp bool
	// TokenDir, when set, is the token folder of every server instead of
	// the home's (a gateway's folder of one person), and Seal, when set,
	// has the plugins keep their files there sealed with it; a plugin that
	// cannot seal is refused.
	TokenDir string
	Seal     *auth.Seal
}

// New returns a Manager.
func New(o Options) *Manager {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.UI == nil {
		o.UI = auth.NoUI{}
	}
	return &Manager{home: o.Home, sup: o.Supervisor, log: o.Logger, ui: o.UI, stepUp: o.StepUp, tokenDir: o.TokenDir, seal: o.Seal, servers: map[string]*Server{}}
}

// TokenDir is the folder of every auth plugin's files under home.
func TokenDir(home string) string { return homedir.Dir(home).Tokens() }

// ServerTokenDir is the folder of srv's auth files: TokenDir, or for a
// server a project file declared, a folder of that project's own under it,
// so that a repository naming its server like one of the user's never
// reaches the user's tokens.
func ServerTokenDir(srv *config.Server, home string) string {
	if !srv.FromProject() {
		return TokenDir(home)
	}
	sum := sha256.Sum256([]byte(srv.Origin.Project))
	return filepath.Join(TokenDir(home), "projects", hex.EncodeToString(sum[:8]))
}

// Config builds what srv's auth plugin learns about it.
func Config(srv *config.Server, home string) auth.Config {
	cfg := auth.Config{
		Server:             srv.Name,
		Method:             srv.Auth,
		URL:                srv.URL,
		TokenDir:           ServerTokenDir(srv, home),
		Settings:           Settings(srv),
		InsecureSkipVerify: !srv.SSLVerify,
		CABundle:           srv.CABundle,
	}
	if srv.Auth == "oauth" {
		cfg.LoginTimeout = srv.OAuth.Timeout
	}
	return cfg
}

// Settings returns the server entry's block for its auth method: the typed
// oauth: block for "oauth", else the block named after the method.
func Settings(srv *config.Server) map[string]any {
	if srv.Auth == "oauth" {
		o := srv.OAuth
		m := map[string]any{"client_name": o.ClientName, "timeout": o.Timeout.Seconds()}
		set := func(k, v string) {
			if v != "" {
				m[k] = v
			}
		}
		set("client_id", o.ClientID)
		set("client_secret", o.ClientSecret)
		set("scope", o.Scope)
		set("client_metadata_url", o.ClientMetadataURL)
		set("grant_type", o.GrantType)
		grantSettings(m, o.OAuthGrant)
		set("dpop", o.DPoP)
		if o.RedirectPort != 0 {
			m["redirect_port"] = o.RedirectPort
		}
		if len(o.ExtraParams) > 0 {
			ep := map[string]any{}
			for k, v := range o.ExtraParams {
				ep[k] = v
			}
			m["extra_params"] = ep
		}
		return m
	}
	if b, ok := srv.Extra[srv.Auth].(map[string]any); ok {
		return b
	}
	return nil
}

// For returns srv's auth, starting its plugin on first use. A server whose
// entry changed since (URL, method, settings or pinned binary) gets a new
// plugin.
func (m *Manager) For(ctx context.Context, srv *config.Server) (*Server, error) {
	if srv.Auth == "" {
		return nil, fmt.Errorf("server '%s' has no auth method (auth: in config.yaml)", srv.Name)
	}
	// A project file never starts a process of its choosing: whatever
	// path an entry took here, its plugin is not started.
	if srv.FromProject() && !config.ProjectAuth(srv.Auth) {
		return nil, sdk.NewError(sdk.CodeConfig, "%s", &config.ProjectAuthError{Server: srv.Name, File: srv.Origin.File, Method: srv.Auth})
	}
	// Nor does it contact a project server the person has not approved
	// (or rejected) as it is now: the plugin would reach its URL.
	if err := srv.AdmitOrigin(); err != nil {
		return nil, sdk.NewError(sdk.CodeConfig, "%s", err)
	}
	cfg := Config(srv, m.home)
	if m.tokenDir != "" {
		cfg.TokenDir = m.tokenDir
	}
	cfg.Seal = m.seal
	// A plugin started from another binary (a new pin) is not reused.
	spec := LaunchSpec(srv)
	key := fmt.Sprintf("%#v %q %q", cfg, spec.Path, spec.SHA256)
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, sdk.NewError(sdk.CodeClosed, "hermes is shutting down")
	}
	if s := m.servers[srv.Name]; s != nil && s.key == key {
		m.mu.Unlock()
		return s, nil
	}
	m.mu.Unlock()

	s, err := m.open(ctx, srv, cfg)
	if err != nil {
		return nil, err
	}
	s.key = key
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.servers[srv.Name]; old != nil {
		if old.key == key {
			// Another caller opened it meanwhile: keep theirs.
			go s.close()
			return old, nil
		}
		go old.close()
	}
	m.servers[srv.Name] = s
	return s, nil
}

// LaunchSpec is the launch spec of srv's auth plugin, hermes-auth-<auth>:
// the binary its plugin: block pins when the pin is for that plugin
// (supervisor.PinnedSpec), else the one on the search path.
func LaunchSpec(srv *config.Server) supervisor.Spec {
	return supervisor.PinnedSpec(supervisor.Spec{
		Kind: sdk.KindAuth, Name: srv.Auth, Label: srv.Name + ".auth",
		Plugins: map[string]plugin.Plugin{sdk.KindAuth: pluginhost.AuthPlugin{}},
	}, (*supervisor.Pin)(srv.PinFor(sdk.KindAuth, srv.Auth)), srv.Name)
}

// open returns srv's auth plugin kept by a supervisor.Instance (started on
// first use, one start at a time, started again after a crash with
// backoff), started once here so that a plugin that cannot start fails
// For.
func (m *Manager) open(ctx context.Context, srv *config.Server, cfg auth.Config) (*Server, error) {
	spec := LaunchSpec(srv)
	log := m.log.With("server", srv.Name)
	inst := supervisor.NewInstance(func(ctx context.Context) (*pluginhost.AuthClient, *supervisor.Plugin, error) {
		ctx, cancel := context.WithTimeout(ctx, OpenTimeout)
		defer cancel()
		p, err := m.sup.Launch(spec)
		if err != nil {
			return nil, nil, fmt.Errorf("auth method '%s' of server '%s': %w", srv.Auth, srv.Name, err)
		}
		raw, err := p.Dispense()
		if err != nil {
			p.Kill()
			return nil, nil, err
		}
		h, ok := raw.(*pluginhost.Auth)
		if !ok {
			p.Kill()
			return nil, nil, fmt.Errorf("plugin %s is not an auth plugin", p.Path)
		}
		c, err := h.Open(ctx, cfg, pluginhost.AuthOptions{UI: m.ui})
		if err != nil {
			p.Kill()
			return nil, nil, err
		}
		return c, p, nil
	}, supervisor.InstanceOptions{
		OnExit: func(reason string) { log.Warn("auth plugin exited; the next use starts it again", "reason", reason) },
	})
	if _, _, err := inst.Get(ctx); err != nil {
		inst.Close()
		return nil, err
	}
	return &Server{name: srv.Name, inst: inst, stepUp: m.stepUp, log: log}, nil
}

// Close stops every auth plugin.
func (m *Manager) Close() {
	m.mu.Lock()
	servers := m.servers
	m.servers = map[string]*Server{}
	m.closed = true
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() { defer wg.Done(); s.close() }()
	}
	wg.Wait()
}

// Server is one server's auth plugin.
type Server struct {
	name string
	key  string
	// inst keeps the plugin process and its opened client.
	inst *supervisor.Instance[*pluginhost.AuthClient]
	// fixed, when set, is used instead of inst: an auth plugin a test
	// runs in its own process (sdktest.AuthInProcess).
	fixed  *pluginhost.AuthClient
	stepUp bool
	log    hclog.Logger

	mu      sync.Mutex
	cached  map[string]string
	until   time.Time
	pending *flight
}

// flight is a challenge in progress, shared by the requests that meet it.
type flight struct {
	done chan struct{}
	ans  transport.ChallengeAnswer
	err  error
	// perRequest: the answer's headers are for its own request only
	// (ValidUntil zero, e.g. a DPoP proof): the others that shared the
	// flight ask for their own.
	perRequest bool
}

// Headers answers the transport's per-request callback: the cached headers
// while they are valid, else the plugin's.
func (s *Server) Headers(ctx context.Context, req transport.HeadersRequest) (map[string]string, error) {
	s.mu.Lock()
	if s.cached != nil && time.Now().Before(s.until) {
		h := s.cached
		s.mu.Unlock()
		return h, nil
	}
	s.mu.Unlock()
	client, err := s.client(ctx)
	if err != nil {
		return nil, err
	}
	h, err := client.Headers(ctx, auth.HeadersRequest{Method: req.Method, URL: req.URL})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if !h.ValidUntil.IsZero() {
		s.cached, s.until = h.Headers, h.ValidUntil
	}
	s.mu.Unlock()
	return h.Headers, nil
}

// retryHeaders answers a challenge that shared another's flight, when
// that answer's headers were for its own request only: retry, with this
// request's headers.
func (s *Server) retryHeaders(ctx context.Context, c transport.ChallengeRequest) (transport.ChallengeAnswer, error) {
	client, err := s.client(ctx)
	if err != nil {
		return transport.ChallengeAnswer{}, err
	}
	h, err := client.Headers(ctx, auth.HeadersRequest{Method: c.Method, URL: c.URL})
	if err != nil {
		return transport.ChallengeAnswer{}, err
	}
	return transport.ChallengeAnswer{Retry: true, Headers: h.Headers}, nil
}

// Challenge answers the transport's challenge callback with the plugin's
// answer and, when it says retry, the headers to retry with: a refresh is
// one call from the transport and one into the auth plugin. Concurrent
// challenges share one answer from the plugin (one refresh, not one per
// request).
func (s *Server) Challenge(ctx context.Context, c transport.ChallengeRequest) (transport.ChallengeAnswer, error) {
	s.mu.Lock()
	s.cached = nil
	if f := s.pending; f != nil {
		s.mu.Unlock()
		select {
		case <-f.done:
			if f.err == nil && f.ans.Retry && f.perRequest {
				return s.retryHeaders(ctx, c)
			}
			return f.ans, f.err
		case <-ctx.Done():
			return transport.ChallengeAnswer{}, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	s.pending = f
	s.mu.Unlock()
	client, err := s.client(ctx)
	if err != nil {
		s.mu.Lock()
		s.pending = nil
		s.mu.Unlock()
		f.err = err
		close(f.done)
		return transport.ChallengeAnswer{}, err
	}
	ans, err := client.Challenge(ctx, auth.Challenge{
		Method: c.Method, URL: c.URL, Status: c.Status, WWWAuthenticate: c.WWWAuthenticate, Attempt: c.Attempt,
		DPoPNonce: c.DPoPNonce,
	}, s.stepUp)
	if err == nil && ans.Retry && len(ans.Headers.Headers) == 0 {
		// A plugin that answers retry without the new headers: ask once.
		ans.Headers, err = client.Headers(ctx, auth.HeadersRequest{Method: c.Method, URL: c.URL})
	}
	f.err = err
	if err == nil {
		f.ans = transport.ChallengeAnswer{Retry: ans.Retry, Headers: ans.Headers.Headers}
	}
	s.mu.Lock()
	s.pending = nil
	s.cached = nil
	if f.ans.Retry && !ans.Headers.ValidUntil.IsZero() {
		s.cached, s.until = ans.Headers.Headers, ans.Headers.ValidUntil
	}
	f.perRequest = f.ans.Retry && ans.Headers.ValidUntil.IsZero()
	s.mu.Unlock()
	close(f.done)
	if err != nil {
		s.log.Debug("challenge not answered", "status", c.Status, "code", sdk.ErrorCode(err))
	}
	return f.ans, f.err
}

// Login logs in through the manager's UI.
func (s *Server) Login(ctx context.Context, o auth.LoginOptions) (auth.Status, error) {
	client, err := s.client(ctx)
	if err != nil {
		return auth.Status{}, err
	}
	st, err := client.Login(ctx, o)
	s.forget()
	return st, err
}

// Logout revokes and deletes the credentials.
func (s *Server) Logout(ctx context.Context) (auth.LogoutResult, error) {
	client, err := s.client(ctx)
	if err != nil {
		return auth.LogoutResult{}, err
	}
	r, err := client.Logout(ctx)
	s.forget()
	return r, err
}

// Status describes the stored credentials. Its text comes from the
// plugin: each field is cut to a bound (the printer escapes it later).
func (s *Server) Status(ctx context.Context) (auth.Status, error) {
	client, err := s.client(ctx)
	if err != nil {
		return auth.Status{}, err
	}
	st, err := client.Status(ctx)
	st.Method, st.Account, st.Issuer, st.Detail = bound(st.Method, 64), bound(st.Account, 200), bound(st.Issuer, 500), bound(st.Detail, 500)
	if len(st.Scopes) > maxScopes {
		st.Scopes = append(st.Scopes[:maxScopes:maxScopes], "...")
	}
	for i, sc := range st.Scopes {
		st.Scopes[i] = bound(sc, 200)
	}
	return st, err
}

// maxScopes bounds the scopes a status lists.
const maxScopes = 50

// bound cuts s to at most n bytes, on a rune boundary, marking the cut.
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

func (s *Server) forget() {
	s.mu.Lock()
	s.cached = nil
	s.mu.Unlock()
}

// client returns the opened client of the running plugin, starting the
// plugin again when it exited.
func (s *Server) client(ctx context.Context) (*pluginhost.AuthClient, error) {
	if s.fixed != nil {
		return s.fixed, nil
	}
	c, _, err := s.inst.Get(ctx)
	if errors.Is(err, supervisor.ErrInstanceClosed) {
		return nil, sdk.NewError(sdk.CodeClosed, "hermes is shutting down")
	}
	return c, err
}

// Pid returns the process id of the running auth plugin, 0 when none
// runs.
func (s *Server) Pid() int {
	if s.inst == nil {
		return 0
	}
	if _, p, ok := s.inst.Current(); ok {
		return p.Pid()
	}
	return 0
}

func (s *Server) close() {
	if s.inst != nil {
		s.inst.Close()
	}
}

// Sessions returns m as the session package's source of credentials.
func (m *Manager) Sessions() session.Credentials { return sessionCredentials{m} }

type sessionCredentials struct{ m *Manager }

func (c sessionCredentials) For(ctx context.Context, srv *config.Server) (session.ServerCredentials, error) {
	s, err := c.m.For(ctx, srv)
	if err != nil {
		return nil, err
	}
	return s, nil
}
