package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hermes-agent/hermes/host/app"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/credentials"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/gateway/vault"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// Paths of a person's upstream logins.
const (
	// StartPath is the login link a person who has not authorized a
	// server is sent to: it sends them on to the server's authorization
	// server.
	StartPath = "/oauth/start"
	// CallbackPath is the redirect URI of every upstream login: the
	// authorization server sends the person back here.
	CallbackPath = "/oauth/callback"
)

// How long a login link, and a login begun with it, stay valid.
const (
	LinkTTL  = 15 * time.Minute
	LoginTTL = 10 * time.Minute
)

// loginStepTimeout bounds one step of a login (the auth plugin's start,
// discovery, registration, the token exchange).
const loginStepTimeout = time.Minute

// personal reports whether srv's credentials are each person's own: an
// upstream with auth: oauth where a person logs in (not a machine grant,
// client_credentials or jwt_bearer: the gateway's own identity). Such a
// server runs per person, as isolation: per_user does, with the person's
// tokens.
func personal(srv *config.Server) bool {
	return srv.Auth == "oauth" && !config.IsMachineGrant(srv.OAuth.GrantType)
}

// Upstreams keeps each person's upstream credentials: every person's
// registry gets auth plugins of their own, on their own folder of the
// vault sealed with their own key, so that a call is made with the
// caller's tokens or none; a person who has not authorized a server is
// sent to log in through the gateway's own callback.
type Upstreams struct {
	f     *app.Factory
	vault *vault.Vault
	// origin is the gateway's origin (scheme://host[:port] of
	// gateway.resource): where the links point.
	origin string
	log    hclog.Logger
	now    func() time.Time

	servers atomic.Pointer[map[string]*config.Server]

	mu    sync.Mutex
	creds map[*registry.Manager]*credentials.Manager
}

// NewUpstreams keeps the credentials of the personal servers among
// servers in v, with links to the gateway at resource's origin.
func NewUpstreams(f *app.Factory, v *vault.Vault, resource string, servers []*config.Server) (*Upstreams, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("key \"gateway.resource\": %q is not an http(s) URL; the links of people's upstream logins are made from it", resource)
	}
	up := &Upstreams{f: f, vault: v, origin: u.Scheme + "://" + u.Host, log: f.Log.Named("upstreams"), now: time.Now,
		creds: map[*registry.Manager]*credentials.Manager{}}
	up.setServers(servers)
	return up, nil
}

// OpenVault opens the vault of the gateway's home with the key from
// variable keyEnv, when servers has a personal one (nil, nil when not:
// no key is needed). Errors name the variable.
func OpenVault(f *app.Factory, keyEnv string, servers []*config.Server) (*vault.Vault, error) {
	if !anyPersonal(servers) {
		return nil, nil
	}
	key, err := vault.KeyFrom(keyEnv, f.Lookup)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(f.HomePath(), vault.DirName)
	v, err := vault.Open(dir, key)
	if errors.Is(err, vault.ErrWrongKey) {
		return nil, fmt.Errorf("$%s does not open the vault in %s: %w; set the key its files were sealed with (nothing was changed)", keyEnv, dir, err)
	}
	return v, err
}

func anyPersonal(servers []*config.Server) bool {
	for _, s := range servers {
		if personal(s) {
			return true
		}
	}
	return false
}

func (u *Upstreams) setServers(servers []*config.Server) {
	m := map[string]*config.Server{}
	for _, s := range servers {
		if personal(s) {
			m[s.Name] = s
		}
	}
	u.servers.Store(&m)
}

// server is the personal server named name, if there is one.
func (u *Upstreams) server(name string) (*config.Server, bool) {
	s, ok := (*u.servers.Load())[name]
	return s, ok
}

// Credentials is a manager of subject's auth plugins: their vault folder,
// sealed with their key. Close it when done.
func (u *Upstreams) Credentials(subject string) *credentials.Manager {
	return PersonCredentials(u.f, u.vault, subject)
}

// PersonCredentials is a manager of subject's auth plugins in v.
func PersonCredentials(f *app.Factory, v *vault.Vault, subject string) *credentials.Manager {
	return credentials.New(credentials.Options{Home: f.HomePath(), Supervisor: f.Supervisor(), Logger: f.Log.Named("person"),
		TokenDir: v.PersonDir(subject), Seal: v.Seal(subject)})
}

// registry builds and starts subject's registry of servers, with auth
// plugins of their own (closed with it, by release).
func (u *Upstreams) registry(ctx context.Context, servers []*config.Server, subject string) (*registry.Manager, error) {
	creds := u.Credentials(subject)
	m, _ := u.f.RegistryWithAuth(app.Live, servers, creds)
	u.mu.Lock()
	u.creds[m] = creds
	u.mu.Unlock()
	return m, m.Start(ctx)
}

// release stops the auth plugins of m, a person's registry that was
// closed.
func (u *Upstreams) release(m *registry.Manager) {
	u.mu.Lock()
	creds := u.creds[m]
	delete(u.creds, m)
	u.mu.Unlock()
	if creds != nil {
		creds.Close()
	}
}

// before answers, instead of a call of t by p, when t's server is personal
// and p has not authorized it: the call would go out without credentials.
func (u *Upstreams) before(ctx context.Context, p Person, t Tool) (mcpvalue.CallResult, bool) {
	if _, ok := u.server(t.Server); !ok || u.vault.HasToken(p.Subject, t.Server) {
		return mcpvalue.CallResult{}, false
	}
	return u.askLogin(ctx, p, t.Server, "you have not authorized it yet"), true
}

// after answers a failed call of t by p when only a login can help (the
// person's grant was revoked or expired); ok is false otherwise.
func (u *Upstreams) after(ctx context.Context, p Person, t Tool, err error) (mcpvalue.CallResult, bool) {
	if _, ok := u.server(t.Server); !ok || !failure.NeedsLogin(err) {
		return mcpvalue.CallResult{}, false
	}
	return u.askLogin(ctx, p, t.Server, "it refused your stored authorization"), true
}

// Link is the login link of subject for server.
func (u *Upstreams) Link(subject, server string) string {
	return u.origin + StartPath + "?l=" + u.vault.Bind(vault.PurposeStart, subject, server, LinkTTL, u.now())
}

// askLogin is the answer to a call that needs p to log in to server: a
// URL-mode elicitation when the client declared one (MCP 2025-11-25),
// and a tool error naming the link either way, so that a client without
// elicitation (or one on a replica that has not seen its session) can
// show it.
func (u *Upstreams) askLogin(ctx context.Context, p Person, server, why string) mcpvalue.CallResult {
	link := u.Link(p.Subject, server)
	text := fmt.Sprintf("MCP server '%s' needs you to log in with your own account (%s): open %s in a browser, then call the tool again. The link is yours alone and expires in %s.", server, why, link, LinkTTL)
	message := fmt.Sprintf("MCP server '%s' needs you to log in with your own account. Open the page to authorize it through the gateway.", server)
	if action, ok := askToOpen(ctx, link, message, randomID(), u.log); ok {
		switch action {
		case ElicitAccept:
			text = fmt.Sprintf("Finish logging in to MCP server '%s' in the page that opened (%s), then call the tool again.", server, link)
		default:
			text = fmt.Sprintf("The login to MCP server '%s' was %sd; the tool cannot run without it. Call it again to be asked again, or open %s.", server, action, link)
		}
	}
	return mcpvalue.CallResult{IsError: true, Content: []mcpvalue.Content{mcpvalue.Text(text)}}
}

func randomID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// handle serves the login link and the callback on g.
func (u *Upstreams) handle(g *Gateway) {
	g.Handle("GET "+StartPath, http.HandlerFunc(u.start))
	g.Handle("GET "+CallbackPath, http.HandlerFunc(u.callback))
}

// start checks a login link and sends its person to the authorization
// server of its server, with a state bound to them (the auth plugin
// discovers, registers the gateway's callback when it must, and builds the
// request with PKCE).
func (u *Upstreams) start(w http.ResponseWriter, r *http.Request) {
	b, err := u.vault.Check(vault.PurposeStart, r.URL.Query().Get("l"), u.now())
	if err != nil {
		page(w, http.StatusBadRequest, "Login link refused", err.Error())
		return
	}
	srv, ok := u.server(b.Server)
	if !ok {
		page(w, http.StatusNotFound, "Login link refused", fmt.Sprintf("the gateway no longer serves '%s' with auth: oauth", b.Server))
		return
	}
	state := u.vault.Bind(vault.PurposeState, b.Subject, b.Server, LoginTTL, u.now())
	st, err := u.login(r.Context(), b.Subject, srv, auth.LoginOptions{RedirectURI: u.origin + CallbackPath, State: state})
	switch {
	case err != nil:
		u.log.Warn("an upstream login did not start", "server", b.Server, "error", err)
		page(w, http.StatusBadGateway, "Login not started", fmt.Sprintf("the login to '%s' could not start: %s", b.Server, oneLine(err.Error())))
	case st.Pending == nil || st.Pending.URL == "":
		page(w, http.StatusBadGateway, "Login not started", fmt.Sprintf("the auth plugin of '%s' cannot log in through the gateway's callback; update hermes-auth-oauth", b.Server))
	default:
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, st.Pending.URL, http.StatusFound)
	}
}

// callback finishes a login: the state (not a bearer token: a browser
// brings it) says whose and which server's it is; the auth plugin checks
// it against the redirect, exchanges the code and stores the tokens in
// that person's folder.
func (u *Upstreams) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if len(q["state"]) != 1 {
		page(w, http.StatusBadRequest, "Login refused", "the redirect carries no state of this gateway")
		return
	}
	b, err := u.vault.Check(vault.PurposeState, q.Get("state"), u.now())
	if err != nil {
		page(w, http.StatusBadRequest, "Login refused", err.Error())
		return
	}
	srv, ok := u.server(b.Server)
	if !ok {
		page(w, http.StatusNotFound, "Login refused", fmt.Sprintf("the gateway no longer serves '%s' with auth: oauth", b.Server))
		return
	}
	_, err = u.login(r.Context(), b.Subject, srv, auth.LoginOptions{RedirectURI: u.origin + CallbackPath, State: q.Get("state"),
		Callback: u.origin + CallbackPath + "?" + r.URL.RawQuery})
	if err != nil {
		u.log.Warn("an upstream login failed", "server", b.Server, "error", err)
		page(w, http.StatusBadGateway, "Login failed", fmt.Sprintf("the login to '%s' failed: %s", b.Server, oneLine(err.Error())))
		return
	}
	u.log.Info("a person authorized an upstream server", "server", b.Server)
	page(w, http.StatusOK, "Logged in", fmt.Sprintf("You have authorized '%s' through the gateway. Return to your client and call the tool again; you can close this tab.", b.Server))
}

// login runs one step of subject's login to srv in an auth plugin of
// theirs, started for it.
func (u *Upstreams) login(ctx context.Context, subject string, srv *config.Server, o auth.LoginOptions) (auth.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, loginStepTimeout)
	defer cancel()
	creds := u.Credentials(subject)
	defer creds.Close()
	s, err := creds.For(ctx, srv)
	if err != nil {
		return auth.Status{}, err
	}
	return s.Login(ctx, o)
}

// page answers a browser with a small page: a title and one line,
// escaped.
func page(w http.ResponseWriter, status int, title, line string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body><h1>%s</h1><p>%s</p></body></html>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(line))
}

// LogoutResult says what Logout did for one server.
type LogoutResult struct {
	Server string
	auth.LogoutResult
}

// Logout removes subject's upstream tokens in v: of server, or of every
// personal server of servers when server is "" (and then their whole
// folder). The auth plugin revokes what the authorization server lets it
// before deleting.
func Logout(ctx context.Context, f *app.Factory, v *vault.Vault, servers []*config.Server, subject, server string) ([]LogoutResult, error) {
	creds := PersonCredentials(f, v, subject)
	defer creds.Close()
	var out []LogoutResult
	found := false
	for _, srv := range servers {
		if !personal(srv) || (server != "" && srv.Name != server) {
			continue
		}
		found = true
		if !v.HasToken(subject, srv.Name) {
			continue
		}
		s, err := creds.For(ctx, srv)
		if err != nil {
			return out, fmt.Errorf("log %s out of '%s': %w", subject, srv.Name, err)
		}
		r, err := s.Logout(ctx)
		if err != nil {
			return out, fmt.Errorf("log %s out of '%s': %w", subject, srv.Name, err)
		}
		out = append(out, LogoutResult{Server: srv.Name, LogoutResult: r})
	}
	if server != "" && !found {
		return nil, fmt.Errorf("the config has no server '%s' with auth: oauth", server)
	}
	if server == "" {
		if _, err := v.RemovePerson(subject); err != nil {
			return out, err
		}
	}
	return out, nil
}

// upstreams keeps the people's credentials of the personal servers among
// servers (nil when there are none): the vault opened with the key of
// gw.vault_key_env.
func upstreams(f *app.Factory, gw *config.Gateway, servers []*config.Server) (*Upstreams, error) {
	v, err := OpenVault(f, gw.VaultKeyEnv, servers)
	if err != nil || v == nil {
		return nil, err
	}
	return NewUpstreams(f, v, gw.Resource, servers)
}

// reloadUpstreams takes up the personal servers of a reloaded config; a
// first one needs the vault, which is opened at start only.
func (r *Registries) reloadUpstreams(servers []*config.Server) error {
	r.mu.Lock()
	ups := r.Upstreams
	r.mu.Unlock()
	if ups == nil {
		if anyPersonal(servers) {
			return errors.New("the config now has a server with auth: oauth, whose people's tokens need the vault, which the gateway opens at start only; restart the gateway")
		}
		return nil
	}
	ups.setServers(servers)
	return nil
}

// oneLine joins the lines of an error for a page.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
