package testoauth_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testoauth"
	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/hermes-agent/hermes/internal/testwait"
)

const deviceGrant = "urn:ietf:params:oauth:grant-type:device_code"

// client is a minimal OAuth client over plain net/http, the way an MCP
// client talks to the authorization server.
type client struct {
	t        *testing.T
	meta     asMetadata
	id       string
	redirect string // the registered redirect URI (port 0: any port)
}

type asMetadata struct {
	Issuer                     string   `json:"issuer"`
	AuthorizationEndpoint      string   `json:"authorization_endpoint"`
	TokenEndpoint              string   `json:"token_endpoint"`
	RegistrationEndpoint       string   `json:"registration_endpoint"`
	DeviceAuthorizationEnpoint string   `json:"device_authorization_endpoint"`
	CodeChallengeMethods       []string `json:"code_challenge_methods_supported"`
	IssParameterSupported      bool     `json:"authorization_response_iss_parameter_supported"`
}

type tokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
	ErrorDesc    string `json:"error_description"`
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newClient discovers the authorization server and registers a native
// public client by dynamic client registration.
func newClient(t *testing.T, as *testoauth.AS, grantTypes ...string) *client {
	t.Helper()
	c := &client{t: t, redirect: "http://127.0.0.1/callback"}
	getJSON(t, as.Issuer+"/.well-known/oauth-authorization-server", &c.meta)
	if c.meta.Issuer != as.Issuer || !slices.Contains(c.meta.CodeChallengeMethods, "S256") || !c.meta.IssParameterSupported ||
		c.meta.RegistrationEndpoint == "" || c.meta.DeviceAuthorizationEnpoint == "" {
		t.Fatalf("authorization server metadata: %+v", c.meta)
	}
	body, _ := json.Marshal(map[string]any{
		"client_name":                "hermes e2e test",
		"application_type":           "native",
		"redirect_uris":              []string{c.redirect},
		"token_endpoint_auth_method": "none",
		"grant_types":                grantTypes,
		"response_types":             []string{"code"},
	})
	resp, err := http.Post(c.meta.RegistrationEndpoint, "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	raw := readBody(t, resp, &reg)
	if resp.StatusCode != http.StatusCreated || reg.ClientID == "" {
		t.Fatalf("registration: HTTP %d %s", resp.StatusCode, raw)
	}
	c.id = reg.ClientID
	return c
}

// authorization is one authorization request in flight.
type authorization struct {
	url, state, verifier, redirect string
}

// authorize builds an authorization request with PKCE for scope and
// resource, redirecting to the loopback port.
func (c *client) authorize(port int, scope, resource string) authorization {
	a := authorization{state: random(), verifier: random(), redirect: fmt.Sprintf("http://127.0.0.1:%d/callback", port)}
	sum := sha256.Sum256([]byte(a.verifier))
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {c.id},
		"redirect_uri":          {a.redirect},
		"scope":                 {scope},
		"state":                 {a.state},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
		"resource":              {resource},
	}
	a.url = c.meta.AuthorizationEndpoint + "?" + q.Encode()
	return a
}

// code checks the redirect's state and iss (RFC 9207) and returns the code.
func (c *client) code(a authorization, redirect url.Values) string {
	c.t.Helper()
	if redirect.Get("error") != "" || redirect.Get("state") != a.state || redirect.Get("iss") != c.meta.Issuer || redirect.Get("code") == "" {
		c.t.Fatalf("authorization response %v (want state %s, iss %s, a code)", redirect, a.state, c.meta.Issuer)
	}
	return redirect.Get("code")
}

// token posts a token request and returns the parsed answer and status.
func (c *client) token(form url.Values) (tokens, int) {
	c.t.Helper()
	form.Set("client_id", c.id)
	resp, err := http.PostForm(c.meta.TokenEndpoint, form)
	if err != nil {
		c.t.Fatal(err)
	}
	var tok tokens
	raw := readBody(c.t, resp, &tok)
	if resp.StatusCode == http.StatusOK && (tok.AccessToken == "" || !strings.EqualFold(tok.TokenType, "Bearer")) {
		c.t.Fatalf("token response %s", raw)
	}
	return tok, resp.StatusCode
}

// exchange redeems an authorization code with the PKCE verifier.
func (c *client) exchange(a authorization, code, resource string) tokens {
	c.t.Helper()
	tok, status := c.token(url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {a.redirect},
		"code_verifier": {a.verifier},
		"resource":      {resource},
	})
	if status != http.StatusOK || tok.RefreshToken == "" {
		c.t.Fatalf("code exchange: HTTP %d %+v", status, tok)
	}
	return tok
}

func (c *client) refresh(refreshToken, resource string) (tokens, int) {
	c.t.Helper()
	return c.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}, "resource": {resource}})
}

// login runs the whole authorization code flow with the test browser and a
// loopback callback listener, and returns the tokens.
func (c *client) login(as *testoauth.AS, scope, resource string) tokens {
	c.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatal(err)
	}
	got := make(chan url.Values, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		select {
		case got <- r.URL.Query():
		default:
		}
		io.WriteString(w, "You may close this window.")
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	a := c.authorize(ln.Addr().(*net.TCPAddr).Port, scope, resource)
	if err := as.Browser(ctxFor(c.t), a.url); err != nil {
		c.t.Fatalf("browser: %v", err)
	}
	var redirect url.Values
	select {
	case redirect = <-got:
	default:
		c.t.Fatal("Browser returned before the callback was called")
	}
	return c.exchange(a, c.code(a, redirect), resource)
}

// mcp is a streamable HTTP MCP session opened with one token.
type mcp struct {
	t       *testing.T
	url     string
	session string
}

type answer struct {
	status    int
	challenge string // WWW-Authenticate
	session   string // Mcp-Session-Id
	body      string
}

// post sends one JSON-RPC request (or notification, id 0) with token.
func post(t *testing.T, mcpURL, token, session string, id int, method string, params any) answer {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id != 0 {
		msg["id"] = id
	}
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, challenge: resp.Header.Get("WWW-Authenticate"),
		session: resp.Header.Get("Mcp-Session-Id"), body: string(raw)}
}

// connect initializes an MCP session with token.
func connect(t *testing.T, mcpURL, token string) *mcp {
	t.Helper()
	a := post(t, mcpURL, token, "", 1, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "testoauth", "version": "1"},
	})
	if a.status != http.StatusOK {
		t.Fatalf("initialize: %+v", a)
	}
	m := &mcp{t: t, url: mcpURL, session: a.session}
	if m.session == "" {
		t.Fatalf("initialize gave no session: %s", a.body)
	}
	post(t, mcpURL, token, m.session, 0, "notifications/initialized", map[string]any{})
	return m
}

func (m *mcp) call(token, method string, params any) answer {
	m.t.Helper()
	return post(m.t, m.url, token, m.session, 2, method, params)
}

func TestAuthorizationCodeFlow(t *testing.T) {
	t.Parallel()
	as := testoauth.Start(t, testoauth.Options{})
	mcpURL := as.StartResourceServer(t)
	base := strings.TrimSuffix(mcpURL, "/mcp")
	prm := base + testserver.ProtectedResourcePath

	// The resource's metadata points at the authorization server.
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	getJSON(t, prm, &meta)
	if meta.Resource != mcpURL || !slices.Equal(meta.AuthorizationServers, []string{as.Issuer}) ||
		!slices.Equal(meta.ScopesSupported, []string{"mcp:read", "mcp:admin"}) {
		t.Fatalf("protected resource metadata %+v", meta)
	}

	// Without a token: 401 and the challenge.
	a := post(t, mcpURL, "", "", 1, "initialize", map[string]any{})
	if want := fmt.Sprintf(`Bearer resource_metadata=%q, scope="mcp:read"`, prm); a.status != http.StatusUnauthorized || a.challenge != want {
		t.Fatalf("without a token: %d %q, want 401 %q", a.status, a.challenge, want)
	}
	a = post(t, mcpURL, "not-a-token", "", 1, "initialize", map[string]any{})
	if a.status != http.StatusUnauthorized || !strings.HasPrefix(a.challenge, `Bearer error="invalid_token"`) {
		t.Fatalf("with a bad token: %d %q", a.status, a.challenge)
	}

	c := newClient(t, as, "authorization_code", "refresh_token")
	read := c.login(as, "mcp:read", mcpURL)
	if read.Scope != "mcp:read" {
		t.Errorf("granted scope %q, want mcp:read", read.Scope)
	}
	m := connect(t, mcpURL, read.AccessToken)
	if a := m.call(read.AccessToken, "tools/list", map[string]any{}); a.status != http.StatusOK ||
		!strings.Contains(a.body, `"echo"`) || !strings.Contains(a.body, `"`+testserver.AdminTool+`"`) {
		t.Fatalf("tools/list: %+v", a)
	}
	if a := m.call("", "tools/list", map[string]any{}); a.status != http.StatusUnauthorized {
		t.Fatalf("tools/list without the token: %+v", a)
	}

	// admin_echo needs mcp:admin: 403 insufficient_scope, then step up.
	admin := map[string]any{"name": testserver.AdminTool, "arguments": map[string]any{"message": "hi"}}
	a = m.call(read.AccessToken, "tools/call", admin)
	if want := fmt.Sprintf(`Bearer error="insufficient_scope", resource_metadata=%q, scope="mcp:read mcp:admin"`, prm); a.status != http.StatusForbidden || a.challenge != want {
		t.Fatalf("admin_echo with mcp:read: %d %q, want 403 %q", a.status, a.challenge, want)
	}
	if a := m.call(read.AccessToken, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "hi"}}); a.status != http.StatusOK {
		t.Fatalf("echo with mcp:read: %+v", a)
	}
	both := c.login(as, "mcp:read mcp:admin", mcpURL)
	if a := m.call(both.AccessToken, "tools/call", admin); a.status != http.StatusOK || !strings.Contains(a.body, `"hi"`) {
		t.Fatalf("admin_echo after step-up: %+v", a)
	}

	// A token for another resource is refused.
	other := c.login(as, "mcp:read", "http://127.0.0.1:1/mcp")
	if a := m.call(other.AccessToken, "tools/list", map[string]any{}); a.status != http.StatusUnauthorized ||
		!strings.Contains(a.challenge, `error="invalid_token"`) {
		t.Fatalf("token for another resource: %+v", a)
	}
}

func TestPasteBack(t *testing.T) {
	t.Parallel()
	as := testoauth.Start(t, testoauth.Options{})
	resource := "http://127.0.0.1:9/mcp"
	c := newClient(t, as, "authorization_code", "refresh_token")
	// Nothing listens on the redirect URI: the user pastes the URL back.
	a := c.authorize(9, "openid mcp:read", resource)
	redirect, err := as.BrowserRedirect(ctxFor(t), a.url)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(redirect)
	if err != nil || !strings.HasPrefix(redirect, a.redirect+"?") {
		t.Fatalf("redirect %q, want %s?...", redirect, a.redirect)
	}
	tok := c.exchange(a, c.code(a, u.Query()), resource)
	if claims := jwtClaims(t, tok.AccessToken); claims["aud"] != resource || claims["sub"] != testoauth.Account ||
		claims["scope"] != "mcp:read" || claims["iss"] != as.Issuer {
		t.Errorf("access token claims %v", claims)
	}
	// A code is spent once.
	if _, status := c.token(url.Values{
		"grant_type": {"authorization_code"}, "code": {u.Query().Get("code")}, "redirect_uri": {a.redirect},
		"code_verifier": {a.verifier}, "resource": {resource},
	}); status != http.StatusBadRequest {
		t.Errorf("second redemption of a code: HTTP %d", status)
	}
}

func TestRefreshAfterExpiry(t *testing.T) {
	t.Parallel()
	as := testoauth.Start(t, testoauth.Options{AccessTTL: time.Second})
	mcpURL := as.StartResourceServer(t)
	c := newClient(t, as, "authorization_code", "refresh_token")
	tok := c.login(as, "mcp:read", mcpURL)
	if tok.ExpiresIn > 1 {
		t.Fatalf("expires_in %d with a one-second TTL", tok.ExpiresIn)
	}
	testwait.For(t, 30*time.Second, "the access token to expire at the resource server", func() bool {
		a := post(t, mcpURL, tok.AccessToken, "", 1, "initialize", map[string]any{})
		return a.status == http.StatusUnauthorized && strings.Contains(a.challenge, "token expired")
	})

	ctx := ctxFor(t)
	if err := as.SetAccessTTL(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	fresh, status := c.refresh(tok.RefreshToken, mcpURL)
	if status != http.StatusOK || fresh.RefreshToken == "" || fresh.RefreshToken == tok.RefreshToken {
		t.Fatalf("refresh: HTTP %d %+v (want a new, rotated refresh token)", status, fresh)
	}
	m := connect(t, mcpURL, fresh.AccessToken)
	if a := m.call(fresh.AccessToken, "tools/list", map[string]any{}); a.status != http.StatusOK {
		t.Fatalf("tools/list with the refreshed token: %+v", a)
	}
	if n, err := as.RefreshCount(ctx); err != nil || n != 1 {
		t.Fatalf("RefreshCount = %d, %v; want 1", n, err)
	}

	// The spent refresh token is invalid_grant, and its reuse revokes the
	// grant: the rotated one dies with it.
	if again, status := c.refresh(tok.RefreshToken, mcpURL); status != http.StatusBadRequest || again.Error != "invalid_grant" {
		t.Fatalf("spent refresh token: HTTP %d %+v", status, again)
	}
	if again, status := c.refresh(fresh.RefreshToken, mcpURL); status != http.StatusBadRequest || again.Error != "invalid_grant" {
		t.Fatalf("rotated refresh token after reuse: HTTP %d %+v", status, again)
	}
	n, err1 := as.RefreshCount(ctx)
	attempts, err2 := as.RefreshAttempts(ctx)
	if err1 != nil || err2 != nil || n != 1 || attempts != 3 {
		t.Fatalf("RefreshCount = %d, RefreshAttempts = %d (%v, %v); want 1 and 3", n, attempts, err1, err2)
	}
	// One reuse was recorded: the spent token; the rotated one presented
	// after it was refused because its grant was gone, not reused.
	if reuses, err := as.RefreshReuses(ctx); err != nil || reuses != 1 {
		t.Fatalf("RefreshReuses = %d, %v; want 1", reuses, err)
	}
}

func TestRevokeAll(t *testing.T) {
	t.Parallel()
	as := testoauth.Start(t, testoauth.Options{})
	mcpURL := as.StartResourceServer(t)
	c := newClient(t, as, "authorization_code", "refresh_token")
	tok := c.login(as, "mcp:read", mcpURL)
	if err := as.RevokeAll(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	if got, status := c.refresh(tok.RefreshToken, mcpURL); status != http.StatusBadRequest || got.Error != "invalid_grant" {
		t.Fatalf("refresh after RevokeAll: HTTP %d %+v", status, got)
	}
	// The JWT access token is checked locally: it lives until it expires.
	m := connect(t, mcpURL, tok.AccessToken)
	if a := m.call(tok.AccessToken, "tools/list", map[string]any{}); a.status != http.StatusOK {
		t.Fatalf("tools/list after RevokeAll: %+v", a)
	}
	// A new login works again.
	tok = c.login(as, "mcp:read", mcpURL)
	if _, status := c.refresh(tok.RefreshToken, mcpURL); status != http.StatusOK {
		t.Fatalf("refresh after a new login: HTTP %d", status)
	}
}

func TestDeviceGrant(t *testing.T) {
	t.Parallel()
	as := testoauth.Start(t, testoauth.Options{})
	mcpURL := as.StartResourceServer(t)
	c := newClient(t, as, deviceGrant, "refresh_token")
	ctx := ctxFor(t)

	start := func() (deviceCode, userCode string) {
		resp, err := http.PostForm(c.meta.DeviceAuthorizationEnpoint, url.Values{
			"client_id": {c.id}, "scope": {"mcp:read mcp:admin"}, "resource": {mcpURL},
		})
		if err != nil {
			t.Fatal(err)
		}
		var da struct {
			DeviceCode      string `json:"device_code"`
			UserCode        string `json:"user_code"`
			VerificationURI string `json:"verification_uri"`
		}
		raw := readBody(t, resp, &da)
		if resp.StatusCode != http.StatusOK || da.DeviceCode == "" || da.UserCode == "" || da.VerificationURI == "" {
			t.Fatalf("device authorization: HTTP %d %s", resp.StatusCode, raw)
		}
		return da.DeviceCode, da.UserCode
	}
	poll := func(deviceCode string) (tokens, int) {
		return c.token(url.Values{"grant_type": {deviceGrant}, "device_code": {deviceCode}, "resource": {mcpURL}})
	}

	deviceCode, userCode := start()
	if tok, status := poll(deviceCode); status != http.StatusBadRequest || tok.Error != "authorization_pending" {
		t.Fatalf("poll before approval: HTTP %d %+v", status, tok)
	}
	if err := as.ApproveDevice(ctx, userCode); err != nil {
		t.Fatal(err)
	}
	tok, status := poll(deviceCode)
	if status != http.StatusOK || tok.RefreshToken == "" || tok.Scope != "mcp:read mcp:admin" {
		t.Fatalf("poll after approval: HTTP %d %+v", status, tok)
	}
	m := connect(t, mcpURL, tok.AccessToken)
	admin := map[string]any{"name": testserver.AdminTool, "arguments": map[string]any{"message": "device"}}
	if a := m.call(tok.AccessToken, "tools/call", admin); a.status != http.StatusOK || !strings.Contains(a.body, `"device"`) {
		t.Fatalf("admin_echo with the device token: %+v", a)
	}
	if _, status := c.refresh(tok.RefreshToken, mcpURL); status != http.StatusOK {
		t.Fatalf("refresh of the device grant: HTTP %d", status)
	}
	if err := as.ApproveDevice(ctx, userCode); err == nil {
		t.Error("a user code was approved twice")
	}

	deviceCode, userCode = start()
	if err := as.DenyDevice(ctx, userCode); err != nil {
		t.Fatal(err)
	}
	if tok, status := poll(deviceCode); status != http.StatusBadRequest || tok.Error != "access_denied" {
		t.Fatalf("poll after denial: HTTP %d %+v", status, tok)
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	if raw := readBody(t, resp, v); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %s", u, resp.StatusCode, raw)
	}
}

func readBody(t *testing.T, resp *http.Response, v any) string {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(raw, v)
	return string(raw)
}

func jwtClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("access token is not a JWT: %q", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	if err != nil || json.Unmarshal(raw, &claims) != nil {
		t.Fatalf("access token claims: %v", err)
	}
	return claims
}

func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Options.DeviceInterval is the interval device authorization responses
// announce; without it they announce none.
func TestDeviceInterval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		interval time.Duration
		want     int
	}{{0, 0}, {time.Second, 1}} {
		as := testoauth.Start(t, testoauth.Options{DeviceInterval: tc.interval})
		c := newClient(t, as, deviceGrant, "refresh_token")
		resp, err := http.PostForm(c.meta.DeviceAuthorizationEnpoint, url.Values{
			"client_id": {c.id}, "scope": {"mcp:read"}, "resource": {"http://127.0.0.1:9/mcp"},
		})
		if err != nil {
			t.Fatal(err)
		}
		var da struct {
			Interval int `json:"interval"`
		}
		if raw := readBody(t, resp, &da); resp.StatusCode != http.StatusOK || da.Interval != tc.want {
			t.Errorf("DeviceInterval %s: HTTP %d %s, want interval %d", tc.interval, resp.StatusCode, raw, tc.want)
		}
	}
}
