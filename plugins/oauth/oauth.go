package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/plugins/oauth/discovery"
	"github.com/hermes-agent/hermes/plugins/oauth/tokenstore"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// maxRefreshMargin is the most a token is refreshed ahead of its expiry
// (for request latency and clock skew).
const maxRefreshMargin = 60 * time.Second

// refreshMargin is how long before its expiry t is refreshed: a tenth of
// its lifetime, at most maxRefreshMargin (an hour's token: 60 s; a 60 s
// token: 6 s; a 30 s token: 3 s, usable for 27 s). A fixed margin as long
// as the lifetime would count every token as expiring the moment it
// arrived, and refresh it on every request and in every process. The
// lifetime is expires_in, else the time from the last refresh (or login)
// to expires_at; unknown, the margin is maxRefreshMargin.
func refreshMargin(t *tokenstore.Token) time.Duration {
	if t == nil {
		return maxRefreshMargin
	}
	life := t.ExpiresIn // seconds
	if life <= 0 {
		from := t.LastRefresh
		if from == 0 {
			from = t.ObtainedAt
		}
		if from > 0 && t.ExpiresAt > from {
			life = t.ExpiresAt - from
		}
	}
	switch {
	case life <= 0, life >= int64(10*maxRefreshMargin/time.Second):
		// Unknown, or long enough for the whole margin (and no overflow
		// of a hostile expires_in).
		return maxRefreshMargin
	}
	return time.Duration(life) * time.Second / 10
}

// needsRefresh reports whether t (with a known expiry) is expired or
// within its refresh margin of it at now.
func needsRefresh(t *tokenstore.Token, now time.Time) bool {
	return t.Expired(now, refreshMargin(t))
}

// requestTimeout bounds one request to the authorization server.
const requestTimeout = 30 * time.Second

// authenticator is hermes-auth-oauth for one server.
type authenticator struct {
	cfg   auth.Config
	set   settings
	store *tokenstore.Store
	hc    *http.Client
	log   hclog.Logger

	// pkceKey derives the PKCE verifier of a login through the host's
	// callback from its state; nil unless the folder is sealed.
	pkceKey []byte

	// loginMu keeps to one login at a time.
	loginMu sync.Mutex

	mu sync.Mutex
	// tok is the token last read or written; loaded says tok is known.
	tok    *tokenstore.Token
	loaded bool
	// served is the access token last handed out in Headers: a 401 to a
	// request made with it, while the file holds another, only needs a
	// retry (another process refreshed).
	served string
	// disc is the discovery result in use.
	disc *discovered

	// grants remembers a refused jwt-bearer grant.
	grants grantState
	// dpop is the DPoP key and nonces (dpop.go).
	dpop dpopState
}

// discovered is what the plugin needs of discovery for token requests.
type discovered struct {
	meta     *discovery.ServerMetadata
	resource string
	scope    string
	prmURL   string
	// supported are the scopes the resource advertises (its metadata's
	// scopes_supported); known after a fresh discovery only.
	supported []string
	// dpopRequired: the resource's metadata says
	// dpop_bound_access_tokens_required; known after a fresh discovery
	// only.
	dpopRequired bool
}

func open(_ context.Context, cfg auth.Config, log hclog.Logger) (*authenticator, error) {
	set, err := parseSettings(cfg.Settings)
	if err != nil {
		return nil, err
	}
	if cfg.LoginTimeout > 0 {
		set.Timeout = cfg.LoginTimeout
	}
	if err := set.loadKey(); err != nil {
		return nil, err
	}
	if cfg.URL == "" {
		return nil, sdk.NewError(sdk.CodeConfig, "server '%s' has no url: OAuth applies to remote (HTTP) servers", cfg.Server)
	}
	if cfg.TokenDir == "" {
		return nil, sdk.NewError(sdk.CodeConfig, "the host gave no token folder")
	}
	var store *tokenstore.Store
	var pkceKey []byte
	if cfg.Seal != nil {
		if store, err = tokenstore.NewSealed(cfg.TokenDir, cfg.Server, cfg.Seal.Key); err != nil {
			return nil, sdk.NewError(sdk.CodeConfig, "%v", err)
		}
		if pkceKey, err = pkceKeyOf(cfg.Seal.Key); err != nil {
			return nil, err
		}
	} else if store, err = tokenstore.New(cfg.TokenDir, cfg.Server); err != nil {
		return nil, err
	}
	hc, err := httpClient(cfg)
	if err != nil {
		return nil, err
	}
	return &authenticator{cfg: cfg, set: set, store: store, hc: hc, log: log, pkceKey: pkceKey}, nil
}

// Sealed reports that the token folder's files are sealed with the key
// the host gave (auth.Sealer).
func (a *authenticator) Sealed() bool { return a.store.Sealed() }

// httpClient is the client for the authorization server, with the
// server's TLS settings.
func httpClient(cfg auth.Config) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureSkipVerify} //nolint:gosec // the user's ssl_verify: false
	if cfg.CABundle != "" {
		pem, err := os.ReadFile(cfg.CABundle)
		if err != nil {
			return nil, sdk.NewError(sdk.CodeConfig, "ssl_verify: reading the CA bundle %s: %v", cfg.CABundle, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, sdk.NewError(sdk.CodeConfig, "ssl_verify: %s holds no PEM certificate", cfg.CABundle)
		}
		tc.RootCAs = pool
	}
	tr.TLSClientConfig = tc
	return &http.Client{Transport: tr, Timeout: requestTimeout}, nil
}

// current returns the token, read again when another process changed the
// file.
func (a *authenticator) current() *tokenstore.Token {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.loaded || a.store.Changed() {
		t, err := a.store.Load()
		if err != nil {
			a.log.Warn("token file unreadable; treating it as absent", "error", err)
		}
		a.tok, a.loaded = t, true
		a.dpop.forget() // the key may have changed with the token
	}
	return a.tok
}

func (a *authenticator) setToken(t *tokenstore.Token) {
	a.mu.Lock()
	a.tok, a.loaded = t, true
	a.mu.Unlock()
}

// Headers gives the access token, refreshed first when it has expired or
// is about to: a Bearer token as it is, a DPoP-bound one with a proof for
// this request (so headers valid for this request only). No token: no
// headers (the server's challenge starts a login where one is possible).
func (a *authenticator) Headers(ctx context.Context, req auth.HeadersRequest) (auth.Headers, error) {
	t := a.current()
	now := time.Now()
	// Expired with a margin: expired already, or within refreshMargin of it
	// (ExpiresSoon alone is false for a token already expired).
	if a.set.direct() && (t == nil || needsRefresh(t, now)) {
		var err error
		if t, err = a.directToken(ctx); err != nil {
			return auth.Headers{}, err
		}
	} else if t != nil && needsRefresh(t, now) && t.RefreshToken != "" {
		fresh, err := a.refresh(ctx, t, false)
		switch {
		case err == nil:
			t = fresh
		case sdk.ErrorCode(err) == sdk.CodeLoginNeeded:
			return auth.Headers{}, err
		case t.Expired(now, 0):
			return auth.Headers{}, err
		default:
			// Still valid for a moment: use it, and try again next time.
			a.log.Warn("refresh failed; using the current token until it expires", "error", err)
		}
	}
	if t == nil {
		return auth.Headers{}, nil
	}
	a.mu.Lock()
	a.served = t.AccessToken
	a.mu.Unlock()
	h, err := a.resourceHeaders(t, req.Method, req.URL)
	if err != nil {
		return auth.Headers{}, err
	}
	if dpopBound(t) {
		return auth.Headers{Headers: h}, nil // a proof per request
	}
	until := now.Add(5 * time.Minute)
	if exp := t.Expiry(); !exp.IsZero() {
		until = exp.Add(-refreshMargin(t))
	}
	return auth.Headers{Headers: h, ValidUntil: until}, nil
}

// Challenge reacts to a 401 (refresh, else log in when a user is there)
// and to a 403 insufficient_scope (step up to the union of the scopes).
func (a *authenticator) Challenge(ctx context.Context, c auth.Challenge, ui auth.UI) (auth.Answer, error) {
	t := a.current()
	a.noteChallenge(c.WWWAuthenticate)
	if dpopBound(t) && auth.DPoPNonceRequested(c.WWWAuthenticate...) && a.takeNonce(c.URL, c.DPoPNonce) {
		// The resource wants its nonce in the proof (RFC 9449 §9): the
		// same token, a new proof.
		return a.retry(ctx, c)
	}
	if c.Status == http.StatusForbidden {
		current := a.requestedScope(t)
		scope, ok := discovery.StepUpScope(current, c.WWWAuthenticate...)
		if !ok {
			return auth.Answer{}, sdk.NewError(sdk.CodeAuth, "MCP server '%s' refused the request (HTTP 403) without asking for scope beyond what was granted (%s); check the account's permissions at the server", a.cfg.Server, orNone(current))
		}
		if !ui.Interactive() {
			return auth.Answer{}, auth.LoginNeeded(a.cfg.Server, fmt.Sprintf("it needs more scope (%s)", shown(scope, 200)))
		}
		if _, err := a.Login(ctx, auth.LoginOptions{Challenge: c.WWWAuthenticate, Scope: scope}, ui); err != nil {
			return auth.Answer{}, err
		}
		return a.retry(ctx, c)
	}
	a.mu.Lock()
	served := a.served
	a.mu.Unlock()
	if t != nil && t.AccessToken != served && !t.Expired(time.Now(), 0) {
		// Another process (a login in another terminal) wrote a new token.
		return a.retry(ctx, c)
	}
	why := "no token is stored"
	if a.set.direct() {
		if _, err := a.directToken(ctx); err != nil {
			return auth.Answer{}, err
		}
		return a.retry(ctx, c)
	}
	if t != nil {
		why = "the token was refused and cannot be refreshed"
		if t.RefreshToken != "" {
			// The token refused is the one served: if another process
			// has refreshed it meanwhile, take that token rather than
			// spend the rotated refresh token again.
			_, err := a.refresh(ctx, &tokenstore.Token{AccessToken: served}, true)
			if err == nil {
				return a.retry(ctx, c)
			}
			if sdk.ErrorCode(err) != sdk.CodeLoginNeeded {
				return auth.Answer{}, err
			}
			why = "the refresh token was refused"
		}
	}
	if !ui.Interactive() {
		return auth.Answer{}, auth.LoginNeeded(a.cfg.Server, why)
	}
	if _, err := a.Login(ctx, auth.LoginOptions{Challenge: c.WWWAuthenticate}, ui); err != nil {
		return auth.Answer{}, err
	}
	return a.retry(ctx, c)
}

// retry is the answer that sends the request again, with the new token's
// headers in it: a refresh costs the transport one round trip.
func (a *authenticator) retry(ctx context.Context, c auth.Challenge) (auth.Answer, error) {
	h, err := a.Headers(ctx, auth.HeadersRequest{Method: c.Method, URL: c.URL})
	if err != nil {
		return auth.Answer{}, err
	}
	return auth.Answer{Retry: true, Headers: h}, nil
}

// requestedScope is the scope the current token was asked for.
func (a *authenticator) requestedScope(t *tokenstore.Token) string {
	if t != nil && t.Scope != "" {
		return t.Scope
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.disc != nil {
		return a.disc.scope
	}
	return ""
}

// refresh spends the refresh token once, under the cross-process lock,
// unless a fresh token exists: the token file is read again under the lock
// and a token not within its refresh margin of expiry is taken as it is
// (this process, or another, refreshed meanwhile). refused says the server
// refused seen (a 401) although the clock says it is fresh: then only a
// token other than seen is taken. The rotated refresh token is saved
// (atomically, under the lock) before the new access token is used, and
// the request, once sent, is not abandoned when the caller gives up: the
// authorization server has spent the old refresh token by then.
func (a *authenticator) refresh(ctx context.Context, seen *tokenstore.Token, refused bool) (*tokenstore.Token, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	t, err := a.store.RefreshLocked(ctx, func(cur *tokenstore.Token) (*tokenstore.Token, error) {
		if cur == nil {
			return nil, auth.LoginNeeded(a.cfg.Server, "no token is stored")
		}
		if !needsRefresh(cur, time.Now()) && (!refused || seen == nil || cur.AccessToken != seen.AccessToken) {
			a.log.Debug("token fresh on disk; not refreshing", "server", a.cfg.Server)
			return cur, nil
		}
		if cur.RefreshToken == "" {
			return nil, auth.LoginNeeded(a.cfg.Server, "the token expired and the authorization server gave no refresh token")
		}
		d, err := a.discovery(ctx, nil, false)
		if err != nil {
			return nil, err
		}
		c, err := a.storedClient(d)
		if err != nil {
			return nil, err
		}
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {cur.RefreshToken}}
		if d.resource != "" {
			form.Set("resource", d.resource)
		}
		// A DPoP-bound token is refreshed with its key (a public
		// client's refresh token is bound to it, RFC 9449 §5).
		p, err := a.tokenProver(d, dpopBound(cur))
		if err != nil {
			return nil, err
		}
		// Once sent, the request spends the refresh token: wait for the
		// answer (bounded) even when the caller has gone, so the rotated
		// one is saved rather than lost.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
		fresh, err := tokenRequest(rctx, a.hc, d.meta.TokenEndpoint, c, form, p)
		rcancel()
		switch code := oauthCode(err); {
		case err == nil:
		case code == "invalid_grant":
			return nil, auth.LoginNeeded(a.cfg.Server, "the authorization server refused the refresh token (invalid_grant: revoked or expired)")
		case code == "invalid_client":
			a.poison()
			return nil, auth.LoginNeeded(a.cfg.Server, "the authorization server no longer knows this client (invalid_client)")
		default:
			return nil, sdk.NewError(sdk.CodeAuth, "refreshing the token of '%s': %v", a.cfg.Server, err)
		}
		fresh.Issuer, fresh.Resource = d.meta.Issuer, d.resource
		if fresh.Scope == "" {
			fresh.Scope = cur.Scope
		}
		a.log.Debug("token refreshed", "server", a.cfg.Server)
		return fresh, nil
	})
	if err != nil {
		return nil, err
	}
	a.setToken(t)
	return t, nil
}

// poison sets a dynamically registered client aside after invalid_client:
// the next login registers again.
func (a *authenticator) poison() {
	if _, err := a.store.PoisonClient(); err != nil {
		a.log.Warn("could not set the refused client aside", "error", err)
	}
}

func (a *authenticator) servedToken() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.served
}

// scopeFor is the scope to request: the caller's, else oauth.scope, else
// the discovered one.
func (a *authenticator) scopeFor(d *discovered, asked string) string {
	switch {
	case asked != "":
		return asked
	case a.set.Scope != "":
		return a.set.Scope
	}
	return d.scope
}

// discovery returns what discovery found: cached, else from the meta
// file, else discovered (fresh forces the last).
func (a *authenticator) discovery(ctx context.Context, challenge []string, fresh bool) (*discovered, error) {
	a.noteChallenge(challenge)
	var d *discovered
	if !fresh {
		a.mu.Lock()
		d = a.disc
		a.mu.Unlock()
		if d != nil {
			return d, nil
		}
		if m, err := a.store.LoadMeta(); err == nil && m != nil && len(m.AuthServer) > 0 {
			if meta, err := discovery.ParseServerMetadata(m.AuthServer); err == nil {
				d = &discovered{meta: meta, resource: m.Resource, scope: m.Scope, prmURL: m.ResourceMetadataURL}
			}
		}
	}
	if d == nil {
		ctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		r, err := discovery.Discover(ctx, a.hc, a.cfg.URL, challenge...)
		if err != nil {
			return nil, sdk.NewError(sdk.CodeAuth, "OAuth discovery for '%s' failed: %v", a.cfg.Server, err)
		}
		d = &discovered{meta: r.AuthServer, resource: r.Resource, scope: r.Scope}
		if r.ResourceMetadata != nil {
			d.prmURL = r.ResourceMetadata.URL
			d.supported = r.ResourceMetadata.ScopesSupported
			d.dpopRequired = r.ResourceMetadata.DPoPBoundAccessTokensRequired
		}
	}
	a.mu.Lock()
	a.disc = d
	a.mu.Unlock()
	return d, nil
}

// saveMeta persists the discovery result, so a cold start refreshes
// without discovering again.
func (a *authenticator) saveMeta(d *discovered) {
	m := &tokenstore.Meta{Issuer: d.meta.Issuer, Resource: d.resource, ResourceMetadataURL: d.prmURL, Scope: d.scope, AuthServer: d.meta.Raw}
	if len(m.AuthServer) == 0 || !json.Valid(m.AuthServer) {
		return
	}
	if err := a.store.SaveMeta(m); err != nil {
		a.log.Warn("could not save the authorization server metadata", "error", err)
	}
}

// storedClient is the client to use at d's authorization server for
// token requests outside a login: the configured one, else the stored one
// (registered with that server).
func (a *authenticator) storedClient(d *discovered) (client, error) {
	if a.set.ClientID != "" {
		return a.configuredClient(d)
	}
	c, err := a.store.LoadClient()
	if err != nil || c == nil {
		return client{}, auth.LoginNeeded(a.cfg.Server, "no OAuth client is registered")
	}
	if c.RegisteredFor != "" && c.RegisteredFor != d.meta.Issuer {
		return client{}, auth.LoginNeeded(a.cfg.Server, "the server moved to another authorization server")
	}
	return client{ID: c.ClientID, Secret: c.ClientSecret, AuthMethod: orDefault(c.TokenEndpointAuthMethod, discovery.AuthNone)}, nil
}

// Logout revokes the tokens where the authorization server supports it
// (RFC 7009), then deletes every file of the server.
func (a *authenticator) Logout(ctx context.Context) (auth.LogoutResult, error) {
	var r auth.LogoutResult
	t := a.current()
	if t != nil {
		d, err := a.discovery(ctx, nil, false)
		switch {
		case err != nil:
			r.Detail = "tokens not revoked: " + err.Error()
		case d.meta.RevocationEndpoint == "":
			r.Detail = "the authorization server offers no revocation"
		default:
			c, cerr := a.storedClient(d)
			if cerr != nil {
				r.Detail = "tokens not revoked: no client to revoke them with"
				break
			}
			rctx, cancel := context.WithTimeout(ctx, requestTimeout)
			revoked, failed := false, false
			for _, tok := range []struct{ value, hint string }{{t.RefreshToken, "refresh_token"}, {t.AccessToken, "access_token"}} {
				if tok.value == "" {
					continue
				}
				_, _, err := postForm(rctx, a.hc, d.meta.RevocationEndpoint, c, url.Values{"token": {tok.value}, "token_type_hint": {tok.hint}}, nil)
				switch {
				case err == nil:
					revoked = true
				case tok.hint == "access_token" && oauthCode(err) == "unsupported_token_type":
					// RFC 7009 §2.2.1: the server cannot revoke this kind of
					// token (e.g. a self-contained JWT); it lives until it
					// expires. The grant itself went with the refresh token.
					if r.Detail == "" {
						r.Detail = "the authorization server cannot revoke the access token; it stays valid until it expires"
					}
				default:
					failed = true
					r.Detail = "revocation failed: " + err.Error()
				}
			}
			r.Revoked = revoked && !failed
			cancel()
		}
	}
	n, err := a.store.Remove()
	r.Removed = n
	a.mu.Lock()
	a.tok, a.loaded, a.disc, a.served = nil, true, nil, ""
	a.mu.Unlock()
	a.dpop.forget() // the key went with the files: the next login makes a new one
	if err != nil {
		return r, sdk.NewError(sdk.CodeOther, "deleting the credentials of '%s': %v", a.cfg.Server, err)
	}
	return r, nil
}

// grantCheckTimeout bounds Status' check of the grant (the host waits
// 30 s for the whole status, the plugin's start included).
const grantCheckTimeout = 15 * time.Second

// Status describes the stored token, never its value, after checking the
// grant with the authorization server (checkGrant): a revoked or expired
// grant is Refused, never "ok".
func (a *authenticator) Status(ctx context.Context) (auth.Status, error) {
	st := a.localStatus()
	if st.LoggedIn && !a.set.direct() {
		a.checkGrant(ctx, &st)
	}
	return st, nil
}

// localStatus describes the stored token as the files say, without asking
// any server.
func (a *authenticator) localStatus() auth.Status {
	st := auth.Status{Method: "oauth"}
	t := a.current()
	if t == nil {
		if a.set.direct() {
			st.CanRefresh = true
			st.Detail = directDetail(a.set.GrantType)
		}
		return st
	}
	st.LoggedIn = true
	st.Account = t.Account
	st.Scopes = strings.Fields(t.Scope)
	st.ExpiresAt = t.Expiry()
	st.CanRefresh = t.RefreshToken != "" || a.set.direct()
	st.Issuer = t.Issuer
	if t.LastRefresh > 0 {
		st.LastRefresh = time.Unix(t.LastRefresh, 0)
	} else if t.ObtainedAt > 0 {
		st.LastRefresh = time.Unix(t.ObtainedAt, 0)
	}
	if a.set.direct() {
		st.Detail = directDetail(a.set.GrantType)
	} else if c, err := a.store.LoadClient(); err == nil && c != nil {
		st.Detail = clientDetail(c.Kind)
	} else if a.set.ClientID != "" {
		st.Detail = clientDetail(tokenstore.KindPreregistered)
	}
	return st
}

// checkGrant asks whether the stored grant still works, so that a status
// never calls a dead grant ok:
//
//   - a refresh token is introspected (RFC 7662) where the authorization
//     server offers it: inactive is refused, active is alive;
//   - else a token expired or within its refresh margin is refreshed
//     (under the lock, the new token kept, as a request would):
//     invalid_grant is refused;
//   - else the access token is tried at the MCP server: a 401 is
//     refused, unless a refresh (the token refused) then works.
//
// A check that cannot be done (the network) leaves st as the files say,
// with a note in Detail.
func (a *authenticator) checkGrant(ctx context.Context, st *auth.Status) {
	ctx, cancel := context.WithTimeout(ctx, grantCheckTimeout)
	defer cancel()
	t := a.current()
	if t == nil {
		return
	}
	refuse := func(why string) {
		st.Refused = true
		st.Detail = joinDetail("expired or revoked: "+why, st.Detail)
	}
	unsure := func(err error) {
		st.Detail = joinDetail("the grant could not be checked: "+shown(err.Error(), 200), st.Detail)
	}
	// afterRefresh reads a refresh's outcome.
	afterRefresh := func(fresh *tokenstore.Token, err error) {
		switch {
		case err == nil:
			*st = a.localStatus()
		case sdk.ErrorCode(err) == sdk.CodeLoginNeeded:
			refuse("the authorization server refused the refresh token")
		default:
			unsure(err)
		}
	}
	if t.RefreshToken != "" {
		active, err := a.introspect(ctx, t.RefreshToken)
		switch {
		case err == nil && !active:
			refuse("the authorization server says the refresh token is no longer active")
			return
		case err == nil:
			return
		}
		a.log.Debug("introspection cannot tell; checking otherwise", "error", err)
		if needsRefresh(t, time.Now()) {
			afterRefresh(a.refresh(ctx, t, false))
			return
		}
	}
	if t.Expired(time.Now(), 0) {
		return // no refresh token: the expiry says it all
	}
	status, err := a.tryToken(ctx, t)
	switch {
	case err != nil:
		unsure(err)
	case status != http.StatusUnauthorized:
	case t.RefreshToken != "":
		afterRefresh(a.refresh(ctx, t, true))
	default:
		refuse("the MCP server refused the access token")
	}
}

// errNoIntrospection: the authorization server offers no introspection.
var errNoIntrospection = errors.New("the authorization server offers no token introspection")

// introspect asks the authorization server (RFC 7662) whether a refresh
// token of this client is active.
func (a *authenticator) introspect(ctx context.Context, refreshToken string) (bool, error) {
	d, err := a.discovery(ctx, nil, false)
	if err != nil {
		return false, err
	}
	if d.meta.IntrospectionEndpoint == "" {
		return false, errNoIntrospection
	}
	c, err := a.storedClient(d)
	if err != nil {
		return false, err
	}
	raw, _, err := postForm(ctx, a.hc, d.meta.IntrospectionEndpoint, c, url.Values{"token": {refreshToken}, "token_type_hint": {"refresh_token"}}, nil)
	if err != nil {
		return false, fmt.Errorf("introspection: %w", err)
	}
	var v struct {
		Active *bool `json:"active"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.Active == nil {
		return false, errors.New("introspection: the answer has no \"active\"")
	}
	return *v.Active, nil
}

// tryToken sends an MCP initialize with t's access token to the server
// and returns the HTTP status (a session it opens is ended at once).
func (a *authenticator) tryToken(ctx context.Context, t *tokenstore.Token) (int, error) {
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hermes","version":"0"}}}`
	var resp *http.Response
	for attempt := 1; ; attempt++ {
		h, err := a.resourceHeaders(t, http.MethodPost, a.cfg.URL)
		if err != nil {
			return 0, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.cfg.URL, strings.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		if resp, err = a.hc.Do(req); err != nil {
			return 0, fmt.Errorf("trying the token at %s: %w", a.cfg.URL, scrubURLError(err))
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		// A resource that wants its DPoP nonce has not refused the token:
		// once more, with the nonce.
		if attempt == 1 && resp.StatusCode == http.StatusUnauthorized && dpopBound(t) &&
			auth.DPoPNonceRequested(resp.Header.Values("WWW-Authenticate")...) && a.takeNonce(a.cfg.URL, resp.Header.Get("DPoP-Nonce")) {
			continue
		}
		break
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && printable(sid) {
		if del, err := http.NewRequestWithContext(ctx, http.MethodDelete, a.cfg.URL, nil); err == nil {
			del.Header.Set("Mcp-Session-Id", sid)
			if h, err := a.resourceHeaders(t, http.MethodDelete, a.cfg.URL); err == nil {
				for k, v := range h {
					del.Header.Set(k, v)
				}
			}
			if r, err := a.hc.Do(del); err == nil {
				r.Body.Close()
			}
		}
	}
	return resp.StatusCode, nil
}

// joinDetail puts first before rest, "; " between.
func joinDetail(first, rest string) string {
	if rest == "" {
		return first
	}
	return first + "; " + rest
}

func orNone(s string) string {
	if s == "" {
		return "no scope"
	}
	return shown(s, 200)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// errLoginCancelled is the user's "skip" at the paste prompt.
var errLoginCancelled = errors.New("login cancelled")

// clientDetail says for a person where the OAuth client came from ("client:
// dcr" said nothing to most).
func clientDetail(k tokenstore.ClientKind) string {
	switch k {
	case tokenstore.KindDCR:
		return "client registered by hermes with the authorization server (dynamic registration)"
	case tokenstore.KindPreregistered:
		return "client from oauth.client_id in config.yaml"
	case tokenstore.KindCIMD:
		return "client identified by hermes's metadata document (client_id is a URL)"
	case "":
		return "client stored by an older hermes"
	}
	return "client: " + string(k)
}
