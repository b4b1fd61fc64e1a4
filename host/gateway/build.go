package gateway

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/hermes-agent/hermes/host/app"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/gateway/audit"
	"github.com/hermes-agent/hermes/host/gateway/identity"
	"github.com/hermes-agent/hermes/host/gateway/limits"
	"github.com/hermes-agent/hermes/host/gateway/policy"
	"github.com/hermes-agent/hermes/host/gateway/telemetry"
	"github.com/hermes-agent/hermes/host/registry"
)

// Setup is what a gateway is built from: the run's composition root, the
// servers of its config and its gateway: block.
type Setup struct {
	F       *app.Factory
	Servers []*config.Server
	Block   *config.Gateway
	// Stdout receives the audit lines when the block says stdout.
	Stdout  io.Writer
	Version string
	// SessionMaxAge bounds a 2025-11-25 session id's life
	// (DefaultSessionMaxAge when 0).
	SessionMaxAge time.Duration
}

// DefaultSessionMaxAge is how long a 2025-11-25 session id is accepted.
const DefaultSessionMaxAge = 24 * time.Hour

// Built is a gateway with what it owns: its registries, its audit log and
// identity (for `gateway check`), closed together.
type Built struct {
	*Gateway
	Registries *Registries
	Identity   *identity.Authenticator
	Policy     *policy.Policy
	audit      *audit.Log
	telemetry  *telemetry.Telemetry
	// tel is the telemetry: block telemetry was made from (a reload with
	// the same block keeps its exporters); stdout is where an audit:
	// block's stdout: true writes.
	tel    config.GatewayTelemetry
	stdout io.Writer
}

// Close closes the registries and the audit log.
func (b *Built) Close() {
	b.Registries.Close()
	if b.audit != nil {
		_ = b.audit.Close()
	}
	shutdown(b.telemetry)
}

// Build builds the gateway s describes: identity, policy, limits, audit,
// the session key, and its registries (shared servers in one registry,
// per-person ones in a registry per person), started. Every error names
// the config key or variable to fix.
func Build(ctx context.Context, s Setup) (*Built, error) {
	gw := s.Block
	if gw == nil {
		return nil, errors.New("config.yaml has no gateway: block; add one (resource, issuers or tokens, policy): see docs/GATEWAY.md")
	}
	auth, err := Identity(gw, s.F.Lookup)
	if err != nil {
		return nil, err
	}
	pol, err := policy.Compile(policy.FromConfig(gw.Policy))
	if err != nil {
		return nil, fmt.Errorf("gateway.policy: %w", err)
	}
	dotenv, err := config.LoadDotEnv(s.F.HomePath())
	if err != nil {
		return nil, err
	}
	key, err := sessionKey(gw.SessionKeyEnv, func(name string) (string, bool) {
		if v, ok := s.F.Lookup(name); ok {
			return v, true
		}
		v, ok := dotenv[name]
		return v, ok
	})
	if err != nil {
		return nil, err
	}
	maxAge := s.SessionMaxAge
	if maxAge <= 0 {
		maxAge = DefaultSessionMaxAge
	}
	ids, err := NewSessionIDs(key, maxAge)
	if err != nil {
		return nil, fmt.Errorf("$%s: %w", gw.SessionKeyEnv, err)
	}
	log, tel, err := sinks(ctx, s, s.Stdout)
	if err != nil {
		return nil, err
	}
	ups, err := upstreams(s.F, gw, s.Servers)
	if err != nil {
		_ = log.Close()
		shutdown(tel)
		return nil, err
	}
	regs, err := registries(ctx, s.F, s.Servers, ups)
	if err != nil {
		_ = log.Close()
		shutdown(tel)
		return nil, err
	}
	path := "/mcp"
	if u, err := url.Parse(gw.Resource); err == nil && u.Path != "" {
		path = u.Path
	}
	g, err := New(Options{Backend: regs, Authenticate: auth.Middleware, Policy: pol, Audit: log,
		Limits:     limits.New(limits.Limits{CallsPerMinute: gw.Limits.CallsPerMinute, Concurrent: gw.Limits.Concurrent}, "gateway.limits", 0),
		SessionIDs: ids, Path: path, Version: s.Version, MaxRequestBytes: int64(gw.MaxRequestKB) << 10, Log: s.F.Log.Named("gateway"), Telemetry: tel})
	if err != nil {
		regs.Close()
		_ = log.Close()
		shutdown(tel)
		return nil, err
	}
	// Mounted whether or not prometheus: is on (404 while it is off), so
	// that a reload can turn it on.
	g.Handle("GET /metrics", tel.MetricsHandler())
	for _, p := range auth.MetadataPaths() {
		g.Handle("GET "+p, auth.MetadataHandler())
	}
	if ups != nil {
		ups.handle(g)
	}
	return &Built{Gateway: g, Registries: regs, Identity: auth, Policy: pol, audit: log, telemetry: tel,
		tel: gw.Telemetry, stdout: s.Stdout}, nil
}

// sinks opens the audit log and makes the telemetry of s's block (a
// telemetry that records nothing when the block names no exporter); an
// audit: block's stdout: true writes to stdout.
func sinks(ctx context.Context, s Setup, stdout io.Writer) (*audit.Log, *telemetry.Telemetry, error) {
	log, err := audit.Open(audit.FromConfig(s.Block.Audit, stdout))
	if err != nil {
		return nil, nil, fmt.Errorf("gateway.audit: %w", err)
	}
	tel, err := newTelemetry(ctx, s)
	if err != nil {
		_ = log.Close()
		return nil, nil, err
	}
	return log, tel, nil
}

// newTelemetry is the telemetry of s's telemetry: block.
func newTelemetry(ctx context.Context, s Setup) (*telemetry.Telemetry, error) {
	t := s.Block.Telemetry
	tel, err := telemetry.New(ctx, telemetry.Config{OTLPEndpoint: t.OTLPEndpoint, Prometheus: t.Prometheus,
		ServiceName: t.ServiceName, ServiceVersion: s.Version, Logger: s.F.Log.Named("telemetry")})
	if err != nil {
		return nil, fmt.Errorf("gateway.telemetry: %w", err)
	}
	return tel, nil
}

// shutdown flushes and stops tel (nil: nothing), bounded.
func shutdown(tel *telemetry.Telemetry) {
	if tel == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = tel.Shutdown(ctx)
}

// Identity is the authenticator of the block's resource, issuers and
// static tokens. An issuer's introspection credentials are the block's
// resolved values.
func Identity(gw *config.Gateway, lookup func(string) (string, bool)) (*identity.Authenticator, error) {
	cfg := identity.Config{Resource: gw.Resource}
	creds := map[string]string{}
	for i, is := range gw.Issuers {
		ic := identity.IssuerConfig{Issuer: is.Issuer, Audience: is.Audience, GroupsClaim: is.GroupsClaim,
			ScopesClaim: is.ScopesClaim, Algorithms: is.Algorithms}
		if in := is.Introspection; in != nil {
			id, secret := fmt.Sprintf("issuer%d.client_id", i), fmt.Sprintf("issuer%d.client_secret", i)
			creds[id], creds[secret] = in.ClientID, in.ClientSecret
			ic.Introspection = &identity.IntrospectionConfig{Endpoint: in.URL, ClientIDEnv: id, ClientSecretEnv: secret}
		}
		cfg.Issuers = append(cfg.Issuers, ic)
	}
	for _, t := range gw.Tokens {
		cfg.Tokens = append(cfg.Tokens, identity.StaticToken{Subject: t.Subject, SHA256: t.SHA256, Groups: t.Groups, Scopes: t.Scopes})
	}
	return identity.New(cfg, identity.Options{Env: func(names []string) (map[string]string, error) {
		out := map[string]string{}
		for _, n := range names {
			if v, ok := creds[n]; ok {
				out[n] = v
			} else if v, ok := lookup(n); ok {
				out[n] = v
			}
		}
		return out, nil
	}})
}

// sessionKey is the deployment's session key from variable name (looked up
// in the run's environment, then in $HERMES_HOME/.env): base64
// (standard or URL alphabet) of at least MinSessionKeyBytes, or that many
// bytes as they are.
func sessionKey(name string, lookup func(string) (string, bool)) ([]byte, error) {
	v, ok := lookup(name)
	if !ok || v == "" {
		return nil, fmt.Errorf("$%s is not set: the gateway authenticates session ids with it; set it from the deployment's secret to a random key (`openssl rand -base64 48`), the same on every replica (gateway.session_key_env names another variable)", name)
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(v); err == nil && len(b) >= MinSessionKeyBytes {
			return b, nil
		}
	}
	return []byte(v), nil
}

// split parts servers into the shared ones and the per-person ones.
func split(servers []*config.Server) (shared, perUser []*config.Server, names []string) {
	for _, s := range servers {
		if s.PerUser() || personal(s) {
			perUser = append(perUser, s)
			names = append(names, s.Name)
		} else {
			shared = append(shared, s)
		}
	}
	return shared, perUser, names
}

// registries starts the registries of servers: the shared ones in one
// live registry, the per-person ones listed once from their records (the
// template) and run per person.
func registries(ctx context.Context, f *app.Factory, servers []*config.Server, ups *Upstreams) (*Registries, error) {
	shared, perUser, _ := split(servers)
	r := &Registries{Upstreams: ups}
	r.Shared, _ = f.Registry(app.Live, shared)
	if err := r.Shared.Start(ctx); err != nil {
		return nil, fmt.Errorf("start the shared servers: %w", err)
	}
	if err := r.setPerUser(ctx, f, perUser); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// setPerUser makes perUser the per-person servers: their template
// registry made or reloaded (closed when there are none), and every
// person's registry closed, to be built again with the new entries on
// their next call.
func (r *Registries) setPerUser(ctx context.Context, f *app.Factory, perUser []*config.Server) error {
	r.mu.Lock()
	template := r.Template
	r.mu.Unlock()
	var names []string
	for _, s := range perUser {
		names = append(names, s.Name)
	}
	switch {
	case len(perUser) == 0:
		template = nil
	case template == nil:
		template, _ = f.Registry(app.Cached, perUser)
		if err := template.Start(ctx); err != nil {
			_ = template.Close()
			return fmt.Errorf("list the per-person servers: %w", err)
		}
	default:
		if _, err := template.Reload(ctx, perUser); err != nil {
			return fmt.Errorf("list the per-person servers: %w", err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.Template; old != nil && old != template {
		go old.Close()
	}
	r.Template, r.PerUser = template, names
	ups := r.Upstreams
	r.ForPerson = func(ctx context.Context, subject string) (*registry.Manager, error) {
		if ups != nil {
			return ups.registry(ctx, perUser, subject)
		}
		m, _ := f.Registry(app.Live, perUser)
		return m, m.Start(ctx)
	}
	for s := range r.people {
		r.closePerson(s)
	}
	return nil
}

// Reload applies a changed config: s's servers (added, removed and changed
// ones, shared and per-person) and its gateway block's identity, policy,
// limits, audit and telemetry. Everything is made before anything is
// applied: a block that does not build changes nothing and is the error.
// The audit file is opened again even when its block did not change (a
// file moved away by logrotate is written anew); telemetry's exporters are
// replaced only when its block changed. Neither loses a record: the old
// audit file is closed once the new one takes the lines, and the requests
// in flight finish on the old exporters, which are then flushed. The
// session key stays as it started (restart the gateway to change it).
func (b *Built) Reload(ctx context.Context, s Setup) error {
	gw := s.Block
	if gw == nil {
		return errors.New("the config has no gateway: block any more; the gateway keeps its old one")
	}
	auth, err := Identity(gw, s.F.Lookup)
	if err != nil {
		return err
	}
	pol, err := policy.Compile(policy.FromConfig(gw.Policy))
	if err != nil {
		return fmt.Errorf("gateway.policy: %w", err)
	}
	if err := b.Registries.reloadUpstreams(s.Servers); err != nil {
		return err
	}
	if s.Stdout != nil {
		b.stdout = s.Stdout
	}
	log, err := audit.Open(audit.FromConfig(gw.Audit, b.stdout))
	if err != nil {
		return fmt.Errorf("gateway.audit: %w", err)
	}
	var tel *telemetry.Telemetry
	if gw.Telemetry != b.tel {
		if tel, err = newTelemetry(ctx, s); err != nil {
			_ = log.Close()
			return err
		}
	}
	discard := func() {
		_ = log.Close()
		shutdown(tel)
	}
	shared, perUser, _ := split(s.Servers)
	if _, err := b.Registries.Shared.Reload(ctx, shared); err != nil {
		discard()
		return fmt.Errorf("reload the shared servers: %w", err)
	}
	if err := b.Registries.setPerUser(ctx, s.F, perUser); err != nil {
		discard()
		return err
	}
	if err := b.audit.Swap(log); err != nil {
		// The new file takes the lines; only closing the old one failed.
		b.opts.Log.Warn("audit: the file before the reload", "error", err)
	}
	if tel != nil {
		b.telemetry.Swap(tel)
		b.tel = gw.Telemetry
	}
	b.SetAuthenticate(auth.Middleware)
	b.SetPolicy(pol)
	b.SetLimits(limits.New(limits.Limits{CallsPerMinute: gw.Limits.CallsPerMinute, Concurrent: gw.Limits.Concurrent}, "gateway.limits", 0))
	b.Identity, b.Policy = auth, pol
	b.Refresh()
	return nil
}
