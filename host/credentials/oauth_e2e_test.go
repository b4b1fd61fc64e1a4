package credentials_test

// End-to-end tests of OAuth through real processes: the host's
// credentials.Manager launches the real hermes-auth-oauth plugin through a
// real supervisor, sessions connect through the real HTTP transport plugin
// (session.Deps.Auth = Manager.Sessions()), the authorization server is
// oidc-provider (internal/testoauth) and the MCP server is hermes-testserver
// as its protected resource. The user is a test UI: its "browser" follows
// the authorization server's redirects to the plugin's loopback callback,
// or there is no browser and it reads notices and answers prompts.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/credentials"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testlog"
	"github.com/hermes-agent/hermes/internal/testoauth"
	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// serverName is the server entry every test logs in to.
const serverName = "notes"

// testTimeout bounds each test's waits; no assertion depends on it.
const testTimeout = 3 * time.Minute

// Environment of the refresher role (TestTwoProcessesRefreshOnce): the test
// binary runs again as a hermes process of its own.
const (
	roleEnv = "HERMES_OAUTH_E2E_ROLE"
	homeEnv = "HERMES_OAUTH_E2E_HOME"
	urlEnv  = "HERMES_OAUTH_E2E_URL"
)

func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == "refresher" {
		os.Exit(refresher())
	}
	// Plugins come from testbin's fresh builds (Options.ExtraDirs), never
	// from an installed copy named by the caller's environment.
	os.Unsetenv("HERMES_PLUGIN_PATH")
	os.Exit(m.Run())
}

// rig is one test's world: the authorization server, the MCP server in
// front of it, a Hermes home, and a supervisor whose (and whose plugins')
// log goes to a buffer at Debug level.
type rig struct {
	t    *testing.T
	as   *testoauth.AS
	url  string // the MCP server's URL: the resource
	home string
	logs *testlog.Buffer
	log  hclog.Logger
	sup  *supervisor.Supervisor
}

func newRig(t *testing.T, o testoauth.Options) *rig {
	t.Helper()
	dir := testbin.Dir(t)
	testbin.Path(t, "hermes-auth-oauth")
	testbin.Path(t, "hermes-transport-http")
	as := testoauth.Start(t, o)
	r := &rig{t: t, as: as, url: as.StartResourceServer(t), home: t.TempDir(), logs: &testlog.Buffer{}}
	r.log = hclog.New(&hclog.LoggerOptions{Name: "hermes", Level: hclog.Debug, Output: r.logs})
	r.sup = supervisor.New(supervisor.Options{Home: r.home, Logger: r.log, ExtraDirs: []string{dir}})
	t.Cleanup(r.sup.KillAll)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("host and plugin log:\n%s", r.logs.String())
		}
	})
	return r
}

// server is the entry of the MCP server with auth: oauth; edit changes its
// oauth: block.
func (r *rig) server(edit func(*config.OAuthSettings)) *config.Server {
	srv := &config.Server{
		Name: serverName, Transport: "http", URL: r.url, SSLVerify: true, Enabled: true,
		ConnectTimeout: time.Minute, Timeout: time.Minute,
		Auth:  "oauth",
		OAuth: config.OAuthSettings{ClientName: "hermes e2e", Timeout: 2 * time.Minute},
	}
	if edit != nil {
		edit(&srv.OAuth)
	}
	return srv
}

// manager is a host's credentials.Manager: ui nil is background work.
func (r *rig) manager(ui auth.UI, stepUp bool) *credentials.Manager {
	m := credentials.New(credentials.Options{Home: r.home, Supervisor: r.sup, Logger: r.log, UI: ui, StepUp: stepUp})
	r.t.Cleanup(m.Close)
	return m
}

// auth returns the manager's auth plugin of srv.
func (r *rig) auth(ctx context.Context, m *credentials.Manager, srv *config.Server) *credentials.Server {
	r.t.Helper()
	a, err := m.For(ctx, srv)
	if err != nil {
		r.t.Fatalf("starting the auth plugin: %v", err)
	}
	return a
}

// login logs in through m's UI and returns the status.
func (r *rig) login(ctx context.Context, m *credentials.Manager, srv *config.Server, o auth.LoginOptions) auth.Status {
	r.t.Helper()
	st, err := r.auth(ctx, m, srv).Login(ctx, o)
	if err != nil {
		r.t.Fatalf("login: %v", err)
	}
	return st
}

// connect opens a session to srv with m's credentials.
func (r *rig) connect(ctx context.Context, m *credentials.Manager, srv *config.Server) (*session.Session, error) {
	s, err := session.Connect(ctx, session.PlanFor(srv, r.home, nil), session.Deps{Home: r.home, Supervisor: r.sup, Logger: r.log, Auth: m.Sessions()})
	if err == nil {
		r.t.Cleanup(func() { s.Close() })
	}
	return s, err
}

func (r *rig) mustConnect(ctx context.Context, m *credentials.Manager, srv *config.Server) *session.Session {
	r.t.Helper()
	s, err := r.connect(ctx, m, srv)
	if err != nil {
		r.t.Fatalf("connect: %v (code %s)", err, codeOf(err))
	}
	return s
}

// call calls tool with {message: msg} and returns its text.
func call(ctx context.Context, s *session.Session, tool, msg string) (string, error) {
	res, err := s.Client.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: map[string]any{"message": msg}}})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", errors.New("tool error: " + b.String())
	}
	return b.String(), nil
}

func mustCall(t *testing.T, ctx context.Context, s *session.Session, tool, msg string) {
	t.Helper()
	got, err := call(ctx, s, tool, msg)
	if err != nil || got != msg {
		t.Fatalf("%s(%q) = %q, %v (code %s)", tool, msg, got, err, codeOf(err))
	}
}

// codeOf is the sdk error code of a failed connect or call.
func codeOf(err error) string {
	var ce *session.ConnectError
	if errors.As(err, &ce) {
		return ce.Code()
	}
	return sdk.ErrorCode(err)
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// tokenFile is the plugin's token file of the server.
func (r *rig) tokenFile() string {
	return filepath.Join(credentials.TokenDir(r.home), auth.FileStem(serverName)+".json")
}

// storedToken is what the token file holds.
type storedToken struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	ExpiresAt    int64  `json:"expires_at"`
}

func (r *rig) token() storedToken {
	r.t.Helper()
	raw, err := os.ReadFile(r.tokenFile())
	if err != nil {
		r.t.Fatalf("reading the token file: %v", err)
	}
	var tok storedToken
	if err := json.Unmarshal(raw, &tok); err != nil || tok.AccessToken == "" {
		r.t.Fatalf("token file: %v (or no access_token)", err)
	}
	return tok
}

// expireToken makes the stored access token expired as far as Hermes
// knows: expires_at a minute in the past. The authorization server's token
// itself is still valid: only a refresh ahead of the request tells the
// difference.
func (r *rig) expireToken() {
	r.editToken(func(fields map[string]json.RawMessage) {
		fields["expires_at"] = json.RawMessage(fmt.Sprint(time.Now().Add(-time.Minute).Unix()))
	})
}

// refusedToken is an access token the MCP server refuses.
const refusedToken = "refused-by-the-server"

// refuseToken stores an access token the server refuses (401
// invalid_token) although it has not expired by the clock, as when the
// authorization server rotated its keys.
func (r *rig) refuseToken() {
	r.editToken(func(fields map[string]json.RawMessage) {
		fields["access_token"] = json.RawMessage(`"` + refusedToken + `"`)
	})
}

// editToken changes the token file the way another process would: a new
// file renamed over the old one.
func (r *rig) editToken(edit func(map[string]json.RawMessage)) {
	r.t.Helper()
	path := r.tokenFile()
	raw, err := os.ReadFile(path)
	if err != nil {
		r.t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		r.t.Fatal(err)
	}
	edit(fields)
	if raw, err = json.Marshal(fields); err != nil {
		r.t.Fatal(err)
	}
	tmp := path + ".test"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) refreshes(ctx context.Context) (count, attempts int) {
	r.t.Helper()
	count, err := r.as.RefreshCount(ctx)
	if err == nil {
		attempts, err = r.as.RefreshAttempts(ctx)
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return count, attempts
}

// ui is the user at the terminal. Its browser follows the authorization
// server's redirects to the loopback callback, unless noBrowser (OpenURL
// fails with auth.ErrNoBrowser). Notices go to the notices channel, Ask
// returns what the test sends on answers. Everything it was shown is kept
// for TestNoSecretInOutput.
type ui struct {
	as        *testoauth.AS
	noBrowser bool
	notices   chan auth.Notice
	answers   chan string

	mu     sync.Mutex
	opened []string
	shown  []string
}

func newUI(as *testoauth.AS, noBrowser bool) *ui {
	return &ui{as: as, noBrowser: noBrowser, notices: make(chan auth.Notice, 32), answers: make(chan string, 1)}
}

func (u *ui) Interactive() bool { return true }

func (u *ui) OpenURL(ctx context.Context, url string) error {
	u.mu.Lock()
	u.opened = append(u.opened, url)
	u.shown = append(u.shown, url)
	u.mu.Unlock()
	if u.noBrowser {
		return auth.ErrNoBrowser
	}
	return u.as.Browser(ctx, url)
}

func (u *ui) Show(_ context.Context, n auth.Notice) error {
	u.mu.Lock()
	u.shown = append(u.shown, n.Text, n.URL, n.UserCode)
	u.mu.Unlock()
	select {
	case u.notices <- n:
	default:
	}
	return nil
}

func (u *ui) Ask(ctx context.Context, prompt string) (string, error) {
	u.mu.Lock()
	u.shown = append(u.shown, prompt)
	u.mu.Unlock()
	select {
	case a := <-u.answers:
		return a, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (u *ui) browserOpens() int { return len(u.openedURLs()) }

func (u *ui) openedURLs() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.opened)
}

func (u *ui) seen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.shown)
}

// notice waits for the next notice.
func (u *ui) notice(t *testing.T, ctx context.Context, what string) auth.Notice {
	t.Helper()
	select {
	case n := <-u.notices:
		return n
	case <-ctx.Done():
		t.Fatalf("no notice %s arrived", what)
		return auth.Notice{}
	}
}

// loginAsync runs a login in the background (for tests that act as the
// user meanwhile); wait returns its result.
func loginAsync(ctx context.Context, a *credentials.Server, o auth.LoginOptions) (wait func() (auth.Status, error)) {
	type result struct {
		st  auth.Status
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := a.Login(ctx, o)
		done <- result{st, err}
	}()
	return func() (auth.Status, error) {
		r := <-done
		return r.st, r.err
	}
}

// checkLoggedIn checks the status of a login as alice with at least scope.
func checkLoggedIn(t *testing.T, st auth.Status, issuer string, scope ...string) {
	t.Helper()
	if !st.LoggedIn || st.Method != "oauth" || st.Issuer != issuer || !st.CanRefresh {
		t.Errorf("status %+v: want logged in with oauth at %s, refreshable", st, issuer)
	}
	// The account comes from an id_token only: this authorization server
	// issues one with openid, which a token for the resource cannot ask for,
	// and a client must not read a JWT access token (RFC 9068 §6). So it
	// may be unknown, but never someone else.
	if st.Account != "" && st.Account != testoauth.Account && st.Account != testoauth.Email {
		t.Errorf("status account %q, want %s or %s", st.Account, testoauth.Account, testoauth.Email)
	}
	for _, s := range scope {
		if !slices.Contains(st.Scopes, s) {
			t.Errorf("status scopes %q lack %s", st.Scopes, s)
		}
	}
	if !st.ExpiresAt.After(time.Now()) {
		t.Errorf("status expiry %v is not in the future", st.ExpiresAt)
	}
}

// A first login through the browser and the loopback callback stores a
// token the status describes (issuer, mcp:read, an expiry, refreshable), in
// 0600 files in a 0700 folder; a session then lists and calls tools with it.
func TestLoginThroughLoopbackCallback(t *testing.T) {
	t.Parallel()
	r := newRig(t, testoauth.Options{})
	ctx := ctxFor(t)
	u := newUI(r.as, false)
	m := r.manager(u, false)
	srv := r.server(nil)

	st := r.login(ctx, m, srv, auth.LoginOptions{})
	checkLoggedIn(t, st, r.as.Issuer, "mcp:read")
	if u.browserOpens() != 1 {
		t.Errorf("the browser opened %d times, want once", u.browserOpens())
	}
	st2, err := r.auth(ctx, m, srv).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkLoggedIn(t, st2, r.as.Issuer, "mcp:read")

	s := r.mustConnect(ctx, m, srv)
	tools, err := s.Client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "echo") || !slices.Contains(names, testserver.AdminTool) {
		t.Errorf("tools %q, want echo and %s", names, testserver.AdminTool)
	}
	mustCall(t, ctx, s, "echo", "hello")

	dir := credentials.TokenDir(r.home)
	checkMode(t, dir, 0o700)
	stem := auth.FileStem(serverName)
	for _, name := range []string{stem + ".json", stem + ".client.json", stem + ".meta.json"} {
		checkMode(t, filepath.Join(dir, name), 0o600)
	}
	if tok := r.token(); tok.RefreshToken == "" {
		t.Error("the token file holds no refresh token")
	}
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
	} else if fi.Mode().Perm() != want {
		t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
	}
}

// With --no-browser the plugin shows the authorization URL and asks for
// the redirect URL: the user opens the URL elsewhere and pastes back where
// the authorization server sent them (the callback is never called).
func TestLoginPasteBack(t *testing.T) {
	t.Parallel()
	r := newRig(t, testoauth.Options{})
	ctx := ctxFor(t)
	u := newUI(r.as, false)
	m := r.manager(u, false)
	srv := r.server(nil)

	wait := loginAsync(ctx, r.auth(ctx, m, srv), auth.LoginOptions{NoBrowser: true})
	n := u.notice(t, ctx, "with the authorization URL")
	redirect, err := r.as.BrowserRedirect(ctx, n.URL)
	if err != nil {
		t.Fatalf("the notice's URL %q: %v", n.URL, err)
	}
	if !strings.HasPrefix(redirect, "http://127.0.0.1:") || !strings.Contains(redirect, "code=") {
		t.Fatalf("redirect %q is not to the loopback callback with a code", redirect)
	}
	u.answers <- redirect
	st, err := wait()
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	checkLoggedIn(t, st, r.as.Issuer, "mcp:read")
	if u.browserOpens() != 0 {
		t.Errorf("the browser opened %d times with NoBrowser", u.browserOpens())
	}
	mustCall(t, ctx, r.mustConnect(ctx, m, srv), "echo", "pasted")
}

// The device authorization grant: asked for (--device), or chosen because
// no browser can open here and the authorization server offers it. The
// user reads the code from the notice and approves it elsewhere; the
// plugin's polling (at the server's 1 s interval) then gets the token.
func TestLoginDeviceGrant(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		noBrowser bool
		opts      auth.LoginOptions
	}{
		{"device flag", false, auth.LoginOptions{Device: true}},
		{"no browser", true, auth.LoginOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, testoauth.Options{DeviceInterval: time.Second})
			ctx := ctxFor(t)
			u := newUI(r.as, tc.noBrowser)
			m := r.manager(u, false)
			srv := r.server(nil)

			wait := loginAsync(ctx, r.auth(ctx, m, srv), tc.opts)
			n := u.notice(t, ctx, "with the user code")
			if n.UserCode == "" || !strings.HasPrefix(n.URL, r.as.Issuer+"/") {
				t.Fatalf("notice %+v: want a user code and the verification URL", n)
			}
			if err := r.as.ApproveDevice(ctx, n.UserCode); err != nil {
				t.Fatal(err)
			}
			st, err := wait()
			if err != nil {
				t.Fatalf("login: %v", err)
			}
			checkLoggedIn(t, st, r.as.Issuer, "mcp:read")
			// --device never tries the browser; without it the plugin tried
			// once and fell back to the device grant.
			if want := map[bool]int{false: 0, true: 1}[tc.noBrowser]; u.browserOpens() != want {
				t.Errorf("the browser was asked to open %d times, want %d", u.browserOpens(), want)
			}
			mustCall(t, ctx, r.mustConnect(ctx, m, srv), "echo", "device")
		})
	}
}

// An access token Hermes knows has expired is refreshed before the request
// goes out: the running plugin notices the token file changed, spends the
// refresh token once, and stores the new access token with the rotated
// refresh token.
func TestRefreshAfterExpiry(t *testing.T) {
	t.Parallel()
	r := newRig(t, testoauth.Options{})
	ctx := ctxFor(t)
	m := r.manager(newUI(r.as, false), false)
	srv := r.server(nil)
	r.login(ctx, m, srv, auth.LoginOptions{})
	before := r.token()

	r.expireToken()
	mustCall(t, ctx, r.mustConnect(ctx, m, srv), "echo", "refreshed")
	if n, attempts := r.refreshes(ctx); n != 1 || attempts != 1 {
		t.Fatalf("refreshes %d, attempts %d; want one", n, attempts)
	}
	after := r.token()
	if after.AccessToken == before.AccessToken || after.RefreshToken == "" || after.RefreshToken == before.RefreshToken {
		t.Errorf("after the refresh: new access token %t, refresh token kept %t, rotated %t",
			after.AccessToken != before.AccessToken, after.RefreshToken != "", after.RefreshToken != before.RefreshToken)
	}
	if !time.Unix(after.ExpiresAt, 0).After(time.Now()) {
		t.Errorf("the refreshed token expires at %v", time.Unix(after.ExpiresAt, 0))
	}
}

// An access token the server refuses (401 invalid_token) although it has
// not expired by the clock is refreshed on the challenge, and the request
// is sent again: the caller never sees the 401.
func TestRefreshOnRefusedToken(t *testing.T) {
	t.Parallel()
	r := newRig(t, testoauth.Options{})
	ctx := ctxFor(t)
	m := r.manager(newUI(r.as, false), false)
	srv := r.server(nil)
	r.login(ctx, m, srv, auth.LoginOptions{})

	r.refuseToken()

	bg := r.manager(nil, false)
	mustCall(t, ctx, r.mustConnect(ctx, bg, srv), "echo", "retried")
	if n, _ := r.refreshes(ctx); n != 1 {
		t.Fatalf("refreshes %d, want 1", n)
	}
	if tok := r.token(); tok.AccessToken == refusedToken {
		t.Error("the refused token is still stored")
	}
}

// A refresh token the authorization server revoked leaves background work
// (no UI) with CodeLoginNeeded and the command to run, promptly: nothing
// waits for a user who is not there.
func TestRevokedRefreshTokenNeedsLogin(t *testing.T) {
	t.Parallel()
	r := newRig(t, testoauth.Options{})
	ctx := ctxFor(t)
	srv := r.server(nil)
	r.login(ctx, r.manager(newUI(r.as, false), false), srv, auth.LoginOptions{})
	if err := r.as.RevokeAll(ctx); err != nil {
		t.Fatal(err)
	}
	r.expireToken()

	bg := r.manager(nil, false)
	errc := make(chan error, 1)
	go func() {
		_, err := r.connect(ctx, bg, srv)
		errc <- err
	}()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		t.Fatal("connect never returned")
	}
	want := "run: hermes mcp login " + serverName
	if codeOf(err) != sdk.CodeLoginNeeded || !strings.Contains(err.Error(), want) {
		t.Fatalf("connect: %v (code %q); want %s saying %q", err, codeOf(err), sdk.CodeLoginNeeded, want)
	}
	// The plugin's own answer says the same.
	_, err = r.auth(ctx, bg, srv).Headers(ctx, transport.HeadersRequest{Method: http.MethodPost, URL: r.url})
	if sdk.ErrorCode(err) != sdk.CodeLoginNeeded || !strings.Contains(err.Error(), want) {
		t.Fatalf("headers: %v; want %s saying %q", err, sdk.CodeLoginNeeded, want)
	}
	if n, attempts := r.refreshes(ctx); n != 0 || attempts < 1 {
		t.Errorf("refreshes %d, attempts %d; want none that succeeded", n, attempts)
	}
}

// Step-up: a token with mcp:read only meets admin_echo's 403
// insufficient_scope. In the background (no step-up) the call fails with
// CodeLoginNeeded naming the scope wanted; with a user and StepUp the
// plugin logs in again for "mcp:read mcp:admin" and the call goes through.
func TestStepUp(t *testing.T) {
	t.Parallel()
	r := newRig(t, testoauth.Options{})
	ctx := ctxFor(t)
	srv := r.server(func(o *config.OAuthSettings) { o.Scope = "mcp:read" })
	st := r.login(ctx, r.manager(newUI(r.as, false), false), srv, auth.LoginOptions{})
	if !slices.Equal(st.Scopes, []string{"mcp:read"}) {
		t.Fatalf("scopes %q after the first login, want mcp:read", st.Scopes)
	}

	bg := r.manager(nil, false)
	s := r.mustConnect(ctx, bg, srv)
	mustCall(t, ctx, s, "echo", "read is enough")
	_, err := call(ctx, s, testserver.AdminTool, "denied")
	if codeOf(err) != sdk.CodeLoginNeeded || !strings.Contains(err.Error(), "mcp:admin") ||
		!strings.Contains(err.Error(), "run: hermes mcp login "+serverName) {
		t.Fatalf("admin_echo in the background: %v (code %q); want %s naming mcp:admin and the login command", err, codeOf(err), sdk.CodeLoginNeeded)
	}

	u := newUI(r.as, false)
	fg := r.manager(u, true)
	s = r.mustConnect(ctx, fg, srv)
	mustCall(t, ctx, s, testserver.AdminTool, "stepped up")
	if u.browserOpens() != 1 {
		t.Fatalf("the browser opened %d times for the step-up, want once", u.browserOpens())
	}
	au, err := url.Parse(u.openedURLs()[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := au.Query().Get("scope"); got != "mcp:read mcp:admin" {
		t.Errorf("the step-up asked for scope %q, want \"mcp:read mcp:admin\"", got)
	}
	if got := strings.Fields(r.token().Scope); !slices.Contains(got, "mcp:read") || !slices.Contains(got, "mcp:admin") {
		t.Errorf("stored scope %q after the step-up", got)
	}
	st, err = r.auth(ctx, fg, srv).Status(ctx)
	if err != nil || !slices.Contains(st.Scopes, "mcp:admin") {
		t.Errorf("status after the step-up: %+v, %v", st, err)
	}
}

// Two hermes processes, each with its own manager and plugin, meet the same
// stale token at the same moment: the cross-process lock lets one spend the
// refresh token, the other takes the result. One refresh reaches the
// authorization server (a second would spend the rotated token again, or,
// with the spent one, make oidc-provider revoke the grant) and both calls
// succeed. The token is stale in two ways: expired by the clock (refreshed
// before the request), or refused by the server (refreshed on the 401).
func TestTwoProcessesRefreshOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		stale func(*rig)
	}{
		{"expired", (*rig).expireToken},
		{"refused", (*rig).refuseToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, testoauth.Options{})
			ctx := ctxFor(t)
			srv := r.server(nil)
			r.login(ctx, r.manager(newUI(r.as, false), false), srv, auth.LoginOptions{})
			before := r.token()
			tc.stale(r)
			twoRefreshers(t, ctx, r)
			if n, attempts := r.refreshes(ctx); n != 1 || attempts != 1 {
				t.Fatalf("refreshes %d, attempts %d; want exactly one refresh", n, attempts)
			}
			if after := r.token(); after.AccessToken == before.AccessToken || after.AccessToken == refusedToken || after.RefreshToken == "" {
				t.Error("the token file does not hold the refreshed token")
			}
		})
	}
}

// twoRefreshers runs two refresher processes over r's home and server,
// lets them go at once, and checks both say ok.
func twoRefreshers(t *testing.T, ctx context.Context, r *rig) {
	t.Helper()
	// Both children block on start until the parent closes its end.
	start, release, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer start.Close()
	defer release.Close()
	type child struct {
		lines  chan string
		stderr *testlog.Buffer
	}
	var children []*child
	for i := range 2 {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), roleEnv+"=refresher", homeEnv+"="+r.home, urlEnv+"="+r.url,
			"HERMES_PLUGIN_PATH="+testbin.Dir(t))
		cmd.ExtraFiles = []*os.File{start}
		c := &child{lines: make(chan string, 4), stderr: &testlog.Buffer{}}
		cmd.Stderr = c.stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				c.lines <- sc.Text()
			}
			close(c.lines)
		}()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("refresher %d stderr:\n%s", i, c.stderr.String())
			}
		})
		children = append(children, c)
	}
	next := func(c *child) string {
		select {
		case l, ok := <-c.lines:
			if ok {
				return l
			}
			return "(exited)"
		case <-ctx.Done():
			return "(no answer)"
		}
	}
	for i, c := range children {
		if l := next(c); l != "ready" {
			t.Fatalf("refresher %d: %q, want ready", i, l)
		}
	}
	release.Close() // go
	for i, c := range children {
		if l := next(c); l != "ok" {
			t.Errorf("refresher %d: %q, want ok", i, l)
		}
	}
}

// refresher is the child of TestTwoProcessesRefreshOnce: a hermes process
// with its own manager and plugin. It starts the plugin, says "ready",
// waits for fd 3 to close, then asks for headers (the race) and calls echo
// through a session; it says "ok" or why not.
func refresher() int {
	log := hclog.New(&hclog.LoggerOptions{Name: "refresher", Level: hclog.Debug, Output: os.Stderr})
	home, url := os.Getenv(homeEnv), os.Getenv(urlEnv)
	sup := supervisor.New(supervisor.Options{Home: home, Logger: log})
	defer sup.KillAll()
	m := credentials.New(credentials.Options{Home: home, Supervisor: sup, Logger: log})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	srv := &config.Server{
		Name: serverName, Transport: "http", URL: url, SSLVerify: true, Enabled: true,
		ConnectTimeout: time.Minute, Timeout: time.Minute,
		Auth: "oauth", OAuth: config.OAuthSettings{ClientName: "hermes e2e", Timeout: 2 * time.Minute},
	}
	fail := func(what string, err error) int {
		fmt.Printf("%s: %v\n", what, err)
		return 1
	}
	a, err := m.For(ctx, srv)
	if err != nil {
		return fail("auth plugin", err)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.NewFile(3, "start"))
	if _, err := a.Headers(ctx, transport.HeadersRequest{Method: http.MethodPost, URL: url}); err != nil {
		return fail("headers", err)
	}
	s, err := session.Connect(ctx, session.PlanFor(srv, home, nil), session.Deps{Home: home, Supervisor: sup, Logger: log, Auth: m.Sessions()})
	if err != nil {
		return fail("connect", err)
	}
	defer s.Close()
	if got, err := call(ctx, s, "echo", "both"); err != nil || got != "both" {
		return fail("echo", fmt.Errorf("%q, %v", got, err))
	}
	fmt.Println("ok")
	return 0
}

// Logout revokes the refresh token at the authorization server (its
// introspection then says inactive) and deletes the server's files; the
// server then needs a login again.
func TestLogout(t *testing.T) {
	t.Parallel()
	r := newRig(t, testoauth.Options{})
	ctx := ctxFor(t)
	m := r.manager(newUI(r.as, false), false)
	srv := r.server(nil)
	r.login(ctx, m, srv, auth.LoginOptions{})
	tok := r.token()
	clientID := r.clientID()
	if !r.active(ctx, clientID, tok.RefreshToken) {
		t.Fatal("the refresh token is not active before the logout")
	}

	res, err := r.auth(ctx, m, srv).Logout(ctx)
	if err != nil || !res.Revoked || res.Removed < 3 {
		t.Fatalf("logout: %+v, %v; want revoked and the token, client and meta files removed", res, err)
	}
	if r.active(ctx, clientID, tok.RefreshToken) {
		t.Error("the refresh token is still active after the logout")
	}
	entries, err := os.ReadDir(credentials.TokenDir(r.home))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), auth.FileStem(serverName)+".") {
			t.Errorf("%s is left after the logout", e.Name())
		}
	}
	st, err := r.auth(ctx, m, srv).Status(ctx)
	if err != nil || st.LoggedIn {
		t.Errorf("status after the logout: %+v, %v", st, err)
	}
	_, err = r.connect(ctx, r.manager(nil, false), srv)
	if codeOf(err) != sdk.CodeLoginNeeded {
		t.Errorf("connect after the logout: %v (code %q), want %s", err, codeOf(err), sdk.CodeLoginNeeded)
	}
	if n, _ := r.refreshes(ctx); n != 0 {
		t.Errorf("%d refreshes happened", n)
	}
}

// clientID is the client the plugin registered.
func (r *rig) clientID() string {
	r.t.Helper()
	raw, err := os.ReadFile(filepath.Join(credentials.TokenDir(r.home), auth.FileStem(serverName)+".client.json"))
	if err != nil {
		r.t.Fatal(err)
	}
	var c struct {
		ClientID string `json:"client_id"`
	}
	if err := json.Unmarshal(raw, &c); err != nil || c.ClientID == "" {
		r.t.Fatalf("client file: %v (or no client_id)", err)
	}
	return c.ClientID
}

// active asks the authorization server's introspection (RFC 7662) whether
// a refresh token of the public client clientID is active.
func (r *rig) active(ctx context.Context, clientID, token string) bool {
	r.t.Helper()
	form := url.Values{"token": {token}, "token_type_hint": {"refresh_token"}, "client_id": {clientID}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.as.Issuer+"/token/introspection", strings.NewReader(form.Encode()))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v struct {
		Active bool `json:"active"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &v) != nil {
		r.t.Fatalf("introspection: HTTP %d %s", resp.StatusCode, raw)
	}
	return v.Active
}

// No secret reaches the user or a log. A confidential client (with a
// client_secret) goes through a paste-back login, calls, a refresh ahead
// of expiry, a refresh on a refused token, a step-up refused in the
// background, a revoked grant, a new login through the browser and a
// logout. Every string Hermes produced meanwhile (notices, prompts,
// statuses, errors, results, and the host's and plugins' Debug log) is
// searched for every access and refresh token the token file held, the
// authorization code and the client secret.
func TestNoSecretInOutput(t *testing.T) {
	t.Parallel()
	r := newRig(t, testoauth.Options{})
	ctx := ctxFor(t)
	clientID, clientSecret := r.registerConfidential(ctx)
	srv := r.server(func(o *config.OAuthSettings) { o.ClientID, o.ClientSecret = clientID, clientSecret })
	secrets := map[string]string{"client_secret": clientSecret}
	var said []string
	keep := func(what string, v ...any) { said = append(said, what+": "+fmt.Sprint(v...)) }
	tokens := func(step string) {
		tok := r.token()
		secrets["access token after "+step] = tok.AccessToken
		secrets["refresh token after "+step] = tok.RefreshToken
	}

	// Paste-back login: the authorization code passes through the user.
	u := newUI(r.as, true)
	fg := r.manager(u, false)
	wait := loginAsync(ctx, r.auth(ctx, fg, srv), auth.LoginOptions{NoBrowser: true})
	n := u.notice(t, ctx, "with the authorization URL")
	redirect, err := r.as.BrowserRedirect(ctx, n.URL)
	if err != nil {
		t.Fatal(err)
	}
	ru, err := url.Parse(redirect)
	if err != nil || ru.Query().Get("code") == "" {
		t.Fatalf("redirect %q has no code", redirect)
	}
	secrets["authorization code"] = ru.Query().Get("code")
	u.answers <- redirect
	st, err := wait()
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	keep("login", fmt.Sprintf("%+v", st))
	tokens("login")
	s := r.mustConnect(ctx, fg, srv)
	got, err := call(ctx, s, "echo", "one")
	keep("echo", got, err)

	// Refreshes: ahead of expiry, and on a refused token.
	bg := r.manager(nil, false)
	r.expireToken()
	s = r.mustConnect(ctx, bg, srv)
	got, err = call(ctx, s, "echo", "two")
	keep("echo after expiry", got, err)
	tokens("refresh")
	r.refuseToken()
	_, err = r.connect(ctx, r.manager(nil, false), srv)
	keep("connect with a refused token", err)
	if err != nil {
		t.Errorf("connect with a refused token: %v", err)
	}
	tokens("second refresh")
	if n, _ := r.refreshes(ctx); n != 2 {
		t.Errorf("refreshes %d, want 2", n)
	}

	// Failures: a step-up without a user, a revoked grant.
	_, err = call(ctx, s, testserver.AdminTool, "no")
	keep("admin_echo in the background", err)
	if codeOf(err) != sdk.CodeLoginNeeded {
		t.Errorf("admin_echo in the background: %v, want %s", err, sdk.CodeLoginNeeded)
	}
	if err := r.as.RevokeAll(ctx); err != nil {
		t.Fatal(err)
	}
	r.expireToken()
	_, err = r.connect(ctx, r.manager(nil, false), srv)
	keep("connect after revocation", err)
	if codeOf(err) != sdk.CodeLoginNeeded {
		t.Errorf("connect after revocation: %v, want %s", err, sdk.CodeLoginNeeded)
	}

	// A new login through the browser, a status and a logout.
	u2 := newUI(r.as, false)
	fg2 := r.manager(u2, false)
	keep("login", fmt.Sprintf("%+v", r.login(ctx, fg2, srv, auth.LoginOptions{})))
	tokens("second login")
	st, err = r.auth(ctx, fg2, srv).Status(ctx)
	keep("status", fmt.Sprintf("%+v", st), err)
	res, err := r.auth(ctx, fg2, srv).Logout(ctx)
	keep("logout", fmt.Sprintf("%+v", res), err)
	if err != nil || !res.Revoked {
		t.Errorf("logout: %+v, %v", res, err)
	}

	output := strings.Join(append(append(said, u.seen()...), u2.seen()...), "\n") + "\n" + r.logs.String()
	if !strings.Contains(output, "run: hermes mcp login "+serverName) || !strings.Contains(output, "token refreshed") {
		t.Fatalf("the output collected lacks the errors or the Debug log:\n%s", output)
	}
	for what, secret := range secrets {
		if len(secret) < 16 {
			t.Errorf("%s %q is too short to search for", what, secret)
			continue
		}
		if i := strings.Index(output, secret); i >= 0 {
			t.Errorf("the %s appears in the output: ...%s...", what, output[max(i-200, 0):i])
		}
	}
}

// registerConfidential registers, by dynamic client registration, a
// native client with a client_secret (client_secret_basic) for the
// loopback redirect URI: the oauth.client_id and oauth.client_secret a user
// would configure.
func (r *rig) registerConfidential(ctx context.Context) (id, secret string) {
	r.t.Helper()
	id, secret = r.register(ctx, map[string]any{
		"client_name":                "hermes e2e confidential",
		"application_type":           "native",
		"redirect_uris":              []string{"http://127.0.0.1/callback"},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "client_secret_basic",
	})
	if secret == "" {
		r.t.Fatal("registration of a confidential client: no client_secret")
	}
	return id, secret
}

// register registers a client with the metadata meta by dynamic client
// registration and returns its client_id and client_secret ("" for none).
func (r *rig) register(ctx context.Context, meta map[string]any) (id, secret string) {
	r.t.Helper()
	body, _ := json.Marshal(meta)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.as.Issuer+"/reg", strings.NewReader(string(body)))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var c struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(raw, &c) != nil || c.ClientID == "" {
		r.t.Fatalf("registration: HTTP %d %s", resp.StatusCode, raw)
	}
	return c.ClientID, c.ClientSecret
}
