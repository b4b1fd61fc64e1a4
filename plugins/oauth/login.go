package main

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hermes-agent/hermes/plugins/oauth/discovery"
	"github.com/hermes-agent/hermes/plugins/oauth/tokenstore"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
	"golang.org/x/oauth2"
)

// Login runs discovery, picks or registers the client, and gets a token
// through the loopback callback (or the redirect URL pasted back), or the
// device grant. The old token stays in place until the new one is saved.
func (a *authenticator) Login(ctx context.Context, o auth.LoginOptions, ui auth.UI) (auth.Status, error) {
	a.loginMu.Lock()
	defer a.loginMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, a.set.Timeout)
	defer cancel()
	if a.set.direct() {
		// No browser: a login fetches a token, and asks again for a
		// grant refused before.
		a.grants.forget()
		if _, err := a.directToken(ctx); err != nil {
			return auth.Status{}, err
		}
		return a.localStatus(), nil
	}
	if o.RedirectURI != "" {
		return a.hostCallbackLogin(ctx, o)
	}
	challenge := o.Challenge
	if len(challenge) == 0 {
		challenge = a.probe(ctx)
	}
	d, err := a.discovery(ctx, challenge, true)
	if err != nil {
		return auth.Status{}, err
	}
	scope := a.scopeFor(d, o.Scope)
	var t *tokenstore.Token
	switch {
	case o.Device:
		if d.meta.DeviceAuthorizationEndpoint == "" {
			return auth.Status{}, sdk.NewError(sdk.CodeAuth, "the authorization server of '%s' offers no device authorization (RFC 8628); log in without --device", a.cfg.Server)
		}
		t, err = a.deviceFlow(ctx, d, scope, ui)
	default:
		t, err = a.codeFlow(ctx, d, scope, o.NoBrowser, ui)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return auth.Status{}, sdk.NewError(sdk.CodeTimeout, "no authorization arrived for '%s' within %s (oauth.timeout); run: hermes mcp login %s", a.cfg.Server, a.set.Timeout, a.cfg.Server)
		}
		return auth.Status{}, err
	}
	return a.keep(ctx, d, t, scope)
}

// keep stores the token a login obtained, with the discovery it used.
func (a *authenticator) keep(ctx context.Context, d *discovered, t *tokenstore.Token, scope string) (auth.Status, error) {
	t.Issuer, t.Resource = d.meta.Issuer, d.resource
	if t.Scope == "" {
		t.Scope = scope
	}
	unlock, err := a.store.Lock(ctx)
	if err != nil {
		return auth.Status{}, err
	}
	err = a.store.Save(t)
	unlock()
	if err != nil {
		return auth.Status{}, sdk.NewError(sdk.CodeOther, "saving the token of '%s': %v", a.cfg.Server, err)
	}
	a.setToken(t)
	a.saveMeta(d)
	return a.localStatus(), nil
}

// probe asks the server, without credentials, for its challenge: the
// WWW-Authenticate lines of its 401 (none when it does not answer so).
func (a *authenticator) probe(ctx context.Context) []string {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hermes","version":"0"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.cfg.URL, strings.NewReader(body))
	if err != nil {
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := a.hc.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusUnauthorized {
		return nil
	}
	return resp.Header.Values("WWW-Authenticate")
}

// loginClient is the client for a login at d's authorization server with
// redirectURI: configured, stored (registered with this server for this
// redirect URI), a metadata document URL, or registered now.
func (a *authenticator) loginClient(ctx context.Context, d *discovered, redirectURI, scope string) (client, error) {
	if a.set.key != nil {
		return a.configuredClient(d)
	}
	if c, err := a.store.LoadClient(); err == nil && c != nil && a.set.ClientID == "" &&
		(c.RegisteredFor == "" || c.RegisteredFor == d.meta.Issuer) && !c.SecretExpired(time.Now()) &&
		(c.Kind == tokenstore.KindCIMD && c.ClientID == a.set.ClientMetadataURL || contains(c.RedirectURIs, redirectURI)) {
		return client{ID: c.ClientID, Secret: c.ClientSecret, AuthMethod: orDefault(c.TokenEndpointAuthMethod, discovery.AuthNone)}, nil
	}
	choice, err := discovery.ChooseClient(d.meta, discovery.ClientConfig{ClientID: a.set.ClientID, ClientSecret: a.set.ClientSecret, ClientMetadataURL: a.set.ClientMetadataURL})
	if err != nil {
		return client{}, sdk.NewError(sdk.CodeConfig, "%v", err)
	}
	switch choice.Kind {
	case discovery.ClientPreRegistered:
		return client{ID: choice.ClientID, Secret: choice.ClientSecret, AuthMethod: choice.AuthMethod}, nil
	case discovery.ClientMetadataDocument:
		if err := a.store.SaveClient(&tokenstore.Client{ClientID: choice.ClientID, TokenEndpointAuthMethod: choice.AuthMethod, RegisteredFor: d.meta.Issuer, Kind: tokenstore.KindCIMD}); err != nil {
			a.log.Warn("could not save the client", "error", err)
		}
		return client{ID: choice.ClientID, AuthMethod: choice.AuthMethod}, nil
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	appType := "native"
	if !loopbackRedirect(redirectURI) {
		appType = "web"
	}
	info, err := discovery.Register(rctx, a.hc, d.meta, discovery.ClientRequest{
		ClientName: a.set.ClientName, RedirectURIs: []string{redirectURI}, Scope: registrationScope(d, scope),
		DeviceCode: d.meta.DeviceAuthorizationEndpoint != "", ApplicationType: appType,
	})
	if err != nil {
		return client{}, sdk.NewError(sdk.CodeAuth, "registering hermes as an OAuth client of '%s': %v; if the server does not allow registration, set oauth.client_id", a.cfg.Server, err)
	}
	sc := &tokenstore.Client{ClientID: info.ClientID, ClientSecret: info.ClientSecret, ClientSecretExpiresAt: info.ClientSecretExpiresAt,
		ClientIDIssuedAt: info.ClientIDIssuedAt, TokenEndpointAuthMethod: info.TokenEndpointAuthMethod, RedirectURIs: []string{redirectURI},
		RegisteredFor: d.meta.Issuer, Kind: tokenstore.KindDCR}
	if err := a.store.SaveClient(sc); err != nil {
		return client{}, sdk.NewError(sdk.CodeOther, "saving the OAuth client of '%s': %v", a.cfg.Server, err)
	}
	return client{ID: info.ClientID, Secret: info.ClientSecret, AuthMethod: orDefault(info.TokenEndpointAuthMethod, discovery.AuthNone)}, nil
}

// registrationScope is the scope a new client registers for: RFC 7591's
// "scope", which an authorization server may hold the client to (as
// oidc-provider does). Registering for this login's scope alone would make
// a later step-up (403 insufficient_scope) fail with invalid_scope, so the
// scopes the resource advertises are added, those the authorization server
// lists as supported: a scope it does not know could fail the
// registration.
func registrationScope(d *discovered, scope string) string {
	var more []string
	for _, s := range d.supported {
		if slices.Contains(d.meta.ScopesSupported, s) {
			more = append(more, s)
		}
	}
	return discovery.UnionScopes(append([]string{scope}, more...)...)
}

// listen opens the loopback callback listener: oauth.redirect_port, else
// the port of the stored client's redirect URI when it is free (so the
// registration is reused), else a free port.
func (a *authenticator) listen() (net.Listener, error) {
	if a.set.RedirectPort != 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(a.set.RedirectPort)))
		if err != nil {
			return nil, sdk.NewError(sdk.CodeConfig, "the OAuth callback port %d (oauth.redirect_port) is not free: %v; close what uses it or pick another port", a.set.RedirectPort, err)
		}
		return ln, nil
	}
	if c, err := a.store.LoadClient(); err == nil && c != nil {
		for _, r := range c.RedirectURIs {
			if u, err := url.Parse(r); err == nil && u.Hostname() == "127.0.0.1" && u.Port() != "" {
				if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", u.Port())); err == nil {
					return ln, nil
				}
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("opening the OAuth callback port: %w", err)
	}
	return ln, nil
}

// callback is what came back to the redirect URI.
type callback struct {
	query url.Values
	err   error
}

// codeFlow is the authorization code grant with PKCE: the browser (or the
// user, who pastes the redirect URL back) brings the code to the loopback
// listener.
func (a *authenticator) codeFlow(ctx context.Context, d *discovered, scope string, noBrowser bool, ui auth.UI) (*tokenstore.Token, error) {
	if d.meta.AuthorizationEndpoint == "" {
		return nil, sdk.NewError(sdk.CodeAuth, "the authorization server of '%s' has no authorization endpoint", a.cfg.Server)
	}
	ln, err := a.listen()
	if err != nil {
		return nil, err
	}
	redirectURI := fmt.Sprintf("http://127.0.0.1:%d%s", ln.Addr().(*net.TCPAddr).Port, callbackPath)
	verifier := oauth2.GenerateVerifier()
	state := randomString()
	results := make(chan callback, 2)
	srv := &http.Server{Handler: newCallbackHandler(state, results), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: maxCallbackHeader}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	c, err := a.loginClient(ctx, d, redirectURI, scope)
	if err != nil {
		return nil, err
	}
	authURL := a.authorizationURL(d, c, redirectURI, state, verifier, scope)

	if !ui.Interactive() {
		return nil, auth.LoginNeeded(a.cfg.Server, "no user is here to log in")
	}
	opened := false
	if !noBrowser {
		err := ui.OpenURL(ctx, authURL)
		switch {
		case err == nil:
			opened = true
			_ = ui.Show(ctx, auth.Notice{Text: fmt.Sprintf("Opened your browser to log in to '%s'. If it did not open, visit:", a.cfg.Server), URL: authURL})
		case errors.Is(err, auth.ErrNoBrowser) && d.meta.DeviceAuthorizationEndpoint != "":
			srv.Close()
			return a.deviceFlow(ctx, d, scope, ui)
		}
	}
	askCtx, stopAsk := context.WithCancel(ctx)
	defer stopAsk()
	if !opened {
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ui.Show(ctx, auth.Notice{
			Text: fmt.Sprintf("To log in to '%s', open this URL in a browser. When it sends you to http://127.0.0.1:%d/callback (a page that may not load on this machine), copy that address and paste it here; or forward the port (ssh -N -L %d:127.0.0.1:%d ...).", a.cfg.Server, port, port, port),
			URL:  authURL,
		})
		go func() {
			line, err := ui.Ask(askCtx, "Paste the redirect URL (or 'skip'):")
			if err != nil {
				if askCtx.Err() == nil {
					// Nothing can be pasted (stdin ended) and no
					// browser opened: no redirect will come.
					results <- callback{err: errNoPaste}
				}
				return
			}
			results <- parsePasted(line)
		}()
	}
	var r callback
	select {
	case r = <-results:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	stopAsk()
	if errors.Is(r.err, errNoPaste) {
		hint := ""
		if d.meta.DeviceAuthorizationEndpoint != "" {
			hint = fmt.Sprintf(", or log in with a code on another device: hermes mcp login %s --device", a.cfg.Server)
		}
		return nil, sdk.NewError(sdk.CodeAuth, "login to '%s': no browser opened and nothing can be pasted here (the input ended); run 'hermes mcp login %s' on a terminal%s", a.cfg.Server, a.cfg.Server, hint)
	}
	if errors.Is(r.err, errTooManyBadCallbacks) {
		return nil, sdk.NewError(sdk.CodeAuth, "login to '%s': %v; run the login again: hermes mcp login %s", a.cfg.Server, r.err, a.cfg.Server)
	}
	if r.err != nil {
		return nil, sdk.NewError(sdk.CodeAuth, "login to '%s': %v", a.cfg.Server, r.err)
	}
	// The listener lets nothing but this login's state through; a pasted
	// URL is checked in exchange.
	return a.exchange(ctx, d, c, r.query, state, redirectURI, verifier)
}

// authorizationURL is the authorization request of the code flow with
// PKCE S256 for client c.
func (a *authenticator) authorizationURL(d *discovered, c client, redirectURI, state, verifier, scope string) string {
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {c.ID},
		"redirect_uri":          {redirectURI},
		"state":                 {state},
		"code_challenge":        {oauth2.S256ChallengeFromVerifier(verifier)},
		"code_challenge_method": {"S256"},
	}
	if scope != "" {
		q.Set("scope", scope)
	}
	if d.resource != "" {
		q.Set("resource", d.resource)
	}
	for _, k := range a.set.extraParamNames() {
		q.Set(k, a.set.ExtraParams[k])
	}
	authURL := d.meta.AuthorizationEndpoint
	if strings.Contains(authURL, "?") {
		return authURL + "&" + q.Encode()
	}
	return authURL + "?" + q.Encode()
}

// exchange trades the code of a redirect's query q for a token, checking
// first that the redirect belongs to this login (state), carries no error,
// and comes from d's authorization server (RFC 9207 iss).
func (a *authenticator) exchange(ctx context.Context, d *discovered, c client, q url.Values, state, redirectURI, verifier string) (*tokenstore.Token, error) {
	// The state first: only this login's redirect may say anything, an
	// error included.
	if !sameState(q, state) {
		return nil, sdk.NewError(sdk.CodeAuth, "login to '%s': the answer's state does not match this login (a stale or forged redirect); run the login again", a.cfg.Server)
	}
	if e := q.Get("error"); e != "" {
		return nil, sdk.NewError(sdk.CodeAuth, "the authorization server refused the login to '%s': %s %s", a.cfg.Server, shown(e, 60), shown(q.Get("error_description"), 200))
	}
	if err := discovery.ValidateIssuerParam(d.meta, q.Get("iss"), q.Has("iss")); err != nil {
		return nil, sdk.NewError(sdk.CodeAuth, "login to '%s' refused: %v", a.cfg.Server, err)
	}
	code := q.Get("code")
	if code == "" {
		return nil, sdk.NewError(sdk.CodeAuth, "login to '%s': the redirect carried no code", a.cfg.Server)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}, "code_verifier": {verifier}}
	if d.resource != "" {
		form.Set("resource", d.resource)
	}
	p, err := a.tokenProver(d, false)
	if err != nil {
		return nil, err
	}
	t, err := tokenRequest(ctx, a.hc, d.meta.TokenEndpoint, c, form, p)
	if err != nil {
		if oauthCode(err) == "invalid_client" && a.set.ClientID == "" {
			a.poison()
			return nil, sdk.NewError(sdk.CodeAuth, "the authorization server of '%s' refused hermes' client registration (invalid_client); it was set aside: run the login again to register anew", a.cfg.Server)
		}
		return nil, sdk.NewError(sdk.CodeAuth, "login to '%s': %v", a.cfg.Server, err)
	}
	return t, nil
}

// loopbackRedirect reports whether uri is a loopback http redirect URI
// (a native client's).
func loopbackRedirect(uri string) bool {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "http" {
		return false
	}
	switch u.Hostname() {
	case "127.0.0.1", "::1", "localhost":
		return true
	}
	return false
}

// callbackPath is the path of the loopback redirect URI.
const callbackPath = "/callback"

// Bounds of the loopback callback listener, which anything on this
// machine (and any web page, through the browser) can reach while a login
// waits: maxBadCallbacks requests that are not the login's redirect end
// the login with an error; maxCallbackHeader bounds one request's header.
const (
	maxBadCallbacks   = 100
	maxCallbackHeader = 64 << 10
)

// errNoPaste ends a login that showed its URL to be pasted back when the
// person's input has ended: nothing will be pasted.
var errNoPaste = errors.New("the input ended before a redirect URL was pasted")

// errTooManyBadCallbacks ends a login whose listener met maxBadCallbacks
// requests that were not its redirect.
var errTooManyBadCallbacks = fmt.Errorf("the OAuth callback port received %d requests that were not this login's redirect (something on this machine is probing it); stopped listening", maxBadCallbacks)

// callbackHandler answers requests to the loopback listener of one login.
// Only a GET of callbackPath carrying the login's state ends the login
// (its query goes to results, once); anything else gets a plain 400 page
// that repeats nothing of the request, and the login goes on waiting,
// until maxBadCallbacks of them end it.
type callbackHandler struct {
	state   string
	results chan<- callback

	mu   sync.Mutex
	bad  int
	done bool
}

func newCallbackHandler(state string, results chan<- callback) *callbackHandler {
	return &callbackHandler{state: state, results: results}
}

func (h *callbackHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	q := r.URL.Query()
	if r.Method != http.MethodGet || r.URL.Path != callbackPath || !sameState(q, h.state) {
		h.refuse(w)
		return
	}
	h.mu.Lock()
	first := !h.done
	h.done = true
	h.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if q.Get("error") != "" {
		fmt.Fprint(w, "<html><body><h1>Authorization Failed</h1><p>The authorization server refused the login; Hermes says why. You can close this tab.</p></body></html>")
	} else {
		fmt.Fprint(w, "<html><body><h1>Authorization Successful</h1><p>You can close this tab and return to Hermes.</p></body></html>")
	}
	if first {
		h.results <- callback{query: q}
	}
}

// refuse answers a request that is not the login's redirect, and ends the
// login at the maxBadCallbacks-th.
func (h *callbackHandler) refuse(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprint(w, "Bad request: this is not the redirect of the login Hermes is waiting for.\n")
	h.mu.Lock()
	defer h.mu.Unlock()
	h.bad++
	if h.bad == maxBadCallbacks && !h.done {
		h.done = true
		h.results <- callback{err: errTooManyBadCallbacks}
	}
}

// sameState reports whether q carries exactly one state, equal to want
// (compared in constant time).
func sameState(q url.Values, want string) bool {
	got := q["state"]
	return len(got) == 1 && want != "" && subtle.ConstantTimeCompare([]byte(got[0]), []byte(want)) == 1
}

// parsePasted reads what the user pasted: the whole redirect URL,
// "?code=...&state=...", or "code=...&state=..."; or a word that skips.
func parsePasted(line string) callback {
	line = strings.TrimSpace(line)
	switch strings.ToLower(line) {
	case "", "skip", "cancel", "s", "n", "no", "q", "quit":
		return callback{err: errLoginCancelled}
	}
	raw := line
	if i := strings.Index(raw, "?"); i >= 0 {
		raw = raw[i+1:]
	}
	if i := strings.Index(raw, "#"); i >= 0 {
		raw = raw[:i]
	}
	q, err := url.ParseQuery(raw)
	if err != nil || (q.Get("code") == "" && q.Get("error") == "") {
		return callback{err: errors.New("the pasted text is not a redirect URL with a code (it should look like http://127.0.0.1:PORT/callback?code=...&state=...)")}
	}
	return callback{query: q}
}

// deviceFlow is the device authorization grant (RFC 8628): the user enters
// a code on another device while the plugin polls.
func (a *authenticator) deviceFlow(ctx context.Context, d *discovered, scope string, ui auth.UI) (*tokenstore.Token, error) {
	if !ui.Interactive() {
		return nil, auth.LoginNeeded(a.cfg.Server, "no user is here to log in")
	}
	c, err := a.loginClient(ctx, d, "http://127.0.0.1/callback", scope)
	if err != nil {
		return nil, err
	}
	form := url.Values{}
	if scope != "" {
		form.Set("scope", scope)
	}
	if d.resource != "" {
		form.Set("resource", d.resource)
	}
	p, err := a.tokenProver(d, false)
	if err != nil {
		return nil, err
	}
	raw, _, err := postForm(ctx, a.hc, d.meta.DeviceAuthorizationEndpoint, c, form, nil)
	if err != nil {
		return nil, sdk.NewError(sdk.CodeAuth, "device authorization for '%s': %v", a.cfg.Server, err)
	}
	var da struct {
		DeviceCode              string `json:"device_code"`
		UserCode                string `json:"user_code"`
		VerificationURI         string `json:"verification_uri"`
		VerificationURIComplete string `json:"verification_uri_complete"`
		ExpiresIn               int64  `json:"expires_in"`
		Interval                int64  `json:"interval"`
	}
	if err := json.Unmarshal(raw, &da); err != nil || da.DeviceCode == "" || da.UserCode == "" || da.VerificationURI == "" {
		return nil, sdk.NewError(sdk.CodeAuth, "device authorization for '%s': the answer lacks device_code, user_code or verification_uri", a.cfg.Server)
	}
	if u, err := url.Parse(da.VerificationURI); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, sdk.NewError(sdk.CodeAuth, "device authorization for '%s': verification_uri is not an http(s) URL", a.cfg.Server)
	}
	if err := ui.Show(ctx, auth.Notice{Text: fmt.Sprintf("To log in to '%s', visit this URL on any device and enter the code:", a.cfg.Server), URL: da.VerificationURI, UserCode: shown(da.UserCode, 40)}); err != nil {
		return nil, err
	}
	// RFC 8628 §3.2: the server's interval, else 5 s. Not a floor of 5 s: a
	// user who approved waits at most one interval for the login to end.
	interval := 5 * time.Second
	if da.Interval > 0 {
		interval = time.Duration(min(da.Interval, 300)) * time.Second
	}
	if da.ExpiresIn > 0 {
		var cancel context.CancelFunc
		// Bounded: a hostile lifetime must not overflow the duration.
		ctx, cancel = context.WithTimeout(ctx, time.Duration(min(da.ExpiresIn, 24*3600))*time.Second)
		defer cancel()
	}
	poll := url.Values{"grant_type": {discovery.GrantDeviceCode}, "device_code": {da.DeviceCode}}
	if d.resource != "" {
		poll.Set("resource", d.resource)
	}
	for {
		timer := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
		t, err := tokenRequest(ctx, a.hc, d.meta.TokenEndpoint, c, poll, p)
		switch oauthCode(err) {
		case "":
			if err != nil {
				return nil, sdk.NewError(sdk.CodeAuth, "device login to '%s': %v", a.cfg.Server, err)
			}
			return t, nil
		case "authorization_pending":
		case "slow_down":
			interval += 5 * time.Second
		case "access_denied":
			return nil, sdk.NewError(sdk.CodeAuth, "the device login to '%s' was denied", a.cfg.Server)
		case "expired_token":
			return nil, sdk.NewError(sdk.CodeAuth, "the device code for '%s' expired before it was entered; run the login again", a.cfg.Server)
		default:
			return nil, sdk.NewError(sdk.CodeAuth, "device login to '%s': %v", a.cfg.Server, err)
		}
	}
}

// randomString is 32 random bytes, base64url: a state value.
func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
