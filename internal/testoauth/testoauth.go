// Package testoauth runs a real OAuth 2.1 authorization server for the
// end-to-end tests of OAuth support: oidc-provider (npm, pinned in
// scripts/npm-deps.sh and installed by `make npm-deps` into the git-ignored
// .npm-deps/oauth-as/), configured by as.mjs beside this file, on
// 127.0.0.1. Tests put the hermes-testserver in front of it as the protected
// resource (StartResourceServer, flag --oauth-issuer). Test code only.
//
// What the authorization server does:
//
//   - metadata at /.well-known/oauth-authorization-server and
//     /.well-known/openid-configuration (RFC 8414 / OIDC);
//     authorization_response_iss_parameter_supported (RFC 9207: the
//     redirect carries iss);
//   - open dynamic client registration (RFC 7591) at /reg. A public client
//     registers token_endpoint_auth_method "none" (the default is
//     client_secret_basic, and a secret is issued), grant_types with
//     "refresh_token" (the default is authorization_code alone: no refresh
//     tokens) and the device grant type to use it. Redirect URIs of
//     application_type "native" on http://127.0.0.1 (or localhost, [::1])
//     match any port; those of "web" clients, the default, must match
//     exactly, port included;
//   - authorization code with PKCE S256 required; a refresh token for every
//     client registered with the refresh_token grant (offline_access is not
//     needed), rotated on each use: a spent refresh token is invalid_grant,
//     and presenting it again revokes the whole grant (RFC 9700 reuse
//     detection), the rotated token included;
//   - resource indicators (RFC 8707): Options.Resource, or when empty any
//     http(s) URL on a loopback host, is a resource with the scopes
//     Options.Scopes (also listed in scopes_supported, with openid,
//     offline_access and email); its access tokens are RS256 JWTs (RFC 9068,
//     typ at+jwt) with aud = resource, valid Options.AccessTTL. The resource
//     must be on the authorization request: without it the access token is
//     an opaque one for the userinfo endpoint, which the resource server
//     refuses, and a token request naming it is invalid_target. Token and
//     refresh requests may omit it unless openid was asked for (then they
//     too get the opaque userinfo token). An empty scope is access_denied;
//   - client authentication by private_key_jwt (RFC 7523) for a client
//     registered with its public key (jwks), and the client_credentials
//     grant for a client registered with it (its access token, for the
//     resource named, is a JWT as above);
//   - DPoP (RFC 9449; ES256 among its dpop_signing_alg_values_supported): a
//     token request with a proof gets a token_type DPoP token whose JWT has
//     cnf.jkt, and a public client's refresh token is bound to the key (its
//     refresh needs a proof by the same key); with Options.DPoPNonce a proof
//     must carry the server's nonce (use_dpop_nonce with a DPoP-Nonce
//     header otherwise), and the nonce changes over time;
//   - the device authorization grant (RFC 8628) at /device/auth, with
//     Options.DeviceInterval as the polling interval it announces, revocation
//     (RFC 7009: a client revokes its refresh token) and introspection
//     (RFC 7662, of a client's own refresh tokens). JWT access tokens are not
//     stored: introspecting one is unsupported_token_type, and revocation
//     does not reach them; they live until they expire;
//   - auto-consent: an authorization request logs in the one account, alice
//     (email alice@example.test), and grants what was asked, through
//     redirects only (Browser follows them);
//   - test-only endpoints behind ApproveDevice, DenyDevice, RevokeAll,
//     SetAccessTTL, RefreshCount, RefreshAttempts and RefreshReuses.
package testoauth

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testnpm"
)

// Package is the npm package of the authorization server; Folder is where
// scripts/npm-deps.sh installs it, relative to the repository root.
const (
	Package = "oidc-provider"
	Folder  = ".npm-deps/oauth-as"
)

// Account is the one user of the authorization server; Email is its email
// claim.
const (
	Account = "alice"
	Email   = "alice@example.test"
)

// DefaultScopes are the resource's scopes when Options.Scopes is empty.
var DefaultScopes = []string{"mcp:read", "mcp:admin"}

// folder is Folder; tests point it elsewhere.
var folder = Folder

// startTimeout bounds how long Start waits for the readiness line: node
// loading oidc-provider on a machine busy with other tests can take over a
// minute.
const startTimeout = 3 * time.Minute

// Options configures the authorization server.
type Options struct {
	// AccessTTL is the lifetime of access tokens, in whole seconds; an hour
	// when zero.
	AccessTTL time.Duration
	// Resource is the one valid resource indicator (the MCP server's URL).
	// Empty accepts any http(s) URL on a loopback host, so the MCP server
	// may start after the authorization server, whose URL it needs.
	Resource string
	// Scopes are the resource's scopes; DefaultScopes when empty.
	Scopes []string
	// DeviceInterval is the polling interval of the device grant, in whole
	// seconds, sent as "interval" in device authorization responses. Zero
	// sends none, and a device then waits the RFC 8628 default of 5 s.
	DeviceInterval time.Duration
	// DPoPNonce makes a token request's DPoP proof carry the server's
	// nonce (RFC 9449 §8): one without it is answered use_dpop_nonce.
	DPoPNonce bool
}

// AS is a running authorization server.
type AS struct {
	// Issuer is its issuer URL, http://127.0.0.1:PORT (no trailing slash).
	Issuer string
	// Port is the port it listens on.
	Port int

	stderr *syncBuffer
}

// Start runs the authorization server (node as.mjs) until the test ends.
// When node or the npm package is missing the test is skipped, or fails
// under CI=true.
func Start(t testing.TB, opts Options) *AS {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, fmt.Sprintf("node is not installed (Node.js 20 or newer runs the OAuth test server): %v", err))
		return nil
	}
	root := testbin.Root()
	modules := filepath.Join(root, filepath.FromSlash(folder), "node_modules")
	if _, err := os.Stat(filepath.Join(modules, Package, "package.json")); err != nil {
		missing(t, fmt.Sprintf("npm package %s is not installed in %s: %v", Package, folder, err))
		return nil
	}
	ttl := int64(3600)
	if opts.AccessTTL > 0 {
		ttl = max(int64(opts.AccessTTL/time.Second), 1)
	}
	scopes := opts.Scopes
	if len(scopes) == 0 {
		scopes = DefaultScopes
	}

	interval := ""
	if opts.DeviceInterval > 0 {
		interval = strconv.FormatInt(max(int64(opts.DeviceInterval/time.Second), 1), 10)
	}

	cmd := exec.Command(node, filepath.Join(root, "internal", "testoauth", "as.mjs"))
	cmd.Env = append(os.Environ(),
		"AS_NODE_MODULES="+modules,
		"AS_PORT=0",
		"AS_ACCESS_TTL="+strconv.FormatInt(ttl, 10),
		"AS_RESOURCE="+opts.Resource,
		"AS_SCOPES="+strings.Join(scopes, " "),
		"AS_DEVICE_INTERVAL="+interval,
		"AS_DPOP_NONCE="+map[bool]string{true: "1"}[opts.DPoPNonce],
	)
	as := &AS{stderr: &syncBuffer{}}
	cmd.Stderr = as.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the authorization server: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("authorization server stderr:\n%s", as.stderr.String())
		}
	})

	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if !sc.Scan() {
			ready <- fmt.Errorf("it exited before listening (%v)", sc.Err())
			return
		}
		var line struct {
			Issuer string `json:"issuer"`
			Port   int    `json:"port"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Issuer == "" {
			ready <- fmt.Errorf("unexpected first line %q", sc.Text())
			return
		}
		as.Issuer, as.Port = line.Issuer, line.Port
		ready <- nil
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case err = <-ready:
	case <-time.After(startTimeout):
		err = fmt.Errorf("no readiness line after %s", startTimeout)
	}
	if err != nil {
		t.Fatalf("authorization server: %v\nstderr:\n%s", err, as.stderr.String())
	}
	return as
}

// missing skips the test, or fails it under CI=true, the rule of
// internal/testnpm.
func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI=true requires it: run %s", why, testnpm.InstallCommand)
	} else {
		t.Skipf("%s; run %s to install it", why, testnpm.InstallCommand)
	}
}

// Stderr returns what the authorization server wrote to stderr so far.
func (as *AS) Stderr() string { return as.stderr.String() }

// Browser is a test browser: it GETs authURL with a fresh cookie jar and
// follows the redirects, through the auto-consent, until one leaves the
// authorization server for the client's redirect URI; it then GETs that URL
// (the client's loopback callback listener) and returns. An authorization
// server error page, or a callback answering 4xx or 5xx, is an error.
func (as *AS) Browser(ctx context.Context, authURL string) error {
	redirect, err := as.BrowserRedirect(ctx, authURL)
	if err != nil {
		return err
	}
	resp, err := get(ctx, http.DefaultClient, redirect)
	if err != nil {
		return fmt.Errorf("calling the redirect URI: %w", err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return fmt.Errorf("redirect URI %s answered HTTP %d: %s", redirect, resp.StatusCode, bytes.TrimSpace(body))
	}
	return nil
}

// BrowserRedirect is Browser without the last step: it returns the URL the
// authorization server redirected to (the client's redirect URI with code,
// state and iss, or an error), for the paste-back path.
func (as *AS) BrowserRedirect(ctx context.Context, authURL string) (string, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return "", err
	}
	client := &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	issuer, err := url.Parse(as.Issuer)
	if err != nil {
		return "", err
	}
	next := authURL
	for range 20 {
		resp, err := get(ctx, client, next)
		if err != nil {
			return "", err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
			return "", fmt.Errorf("GET %s: HTTP %d without a redirect: %s", next, resp.StatusCode, bytes.TrimSpace(body))
		}
		u, err := resp.Request.URL.Parse(loc)
		if err != nil {
			return "", fmt.Errorf("GET %s: bad Location %q: %w", next, loc, err)
		}
		if u.Scheme != issuer.Scheme || u.Host != issuer.Host {
			return u.String(), nil
		}
		next = u.String()
	}
	return "", fmt.Errorf("more than 20 redirects from %s", authURL)
}

func get(ctx context.Context, client *http.Client, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	return client.Do(req)
}

// ApproveDevice approves the pending device authorization request of
// userCode (as shown to the user, dashes or not) as alice, granting what it
// asked for; the device's next token poll gets its tokens.
func (as *AS) ApproveDevice(ctx context.Context, userCode string) error {
	return as.post(ctx, "/test/device/approve", url.Values{"user_code": {userCode}})
}

// DenyDevice denies the pending device authorization request of userCode;
// the device's next token poll gets access_denied.
func (as *AS) DenyDevice(ctx context.Context, userCode string) error {
	return as.post(ctx, "/test/device/deny", url.Values{"user_code": {userCode}})
}

// RevokeAll revokes every grant alice gave, with its refresh tokens and
// codes: a stored refresh token then gets invalid_grant. JWT access tokens
// already issued stay valid until they expire.
func (as *AS) RevokeAll(ctx context.Context) error {
	return as.post(ctx, "/test/revoke-all", nil)
}

// SetAccessTTL changes the lifetime of access tokens issued from now on
// (whole seconds, at least one): a test lets short-lived tokens expire, then
// refreshes into long-lived ones.
func (as *AS) SetAccessTTL(ctx context.Context, ttl time.Duration) error {
	secs := max(int64(ttl/time.Second), 1)
	return as.post(ctx, "/test/access-ttl", url.Values{"seconds": {strconv.FormatInt(secs, 10)}})
}

// RefreshCount returns how many refresh_token grants succeeded so far.
func (as *AS) RefreshCount(ctx context.Context) (int, error) {
	s, err := as.stats(ctx)
	return s.Refreshes, err
}

// RefreshAttempts returns how many refresh_token grant requests arrived so
// far, failed ones included.
func (as *AS) RefreshAttempts(ctx context.Context) (int, error) {
	s, err := as.stats(ctx)
	return s.RefreshAttempts, err
}

// RefreshReuses returns how many times a spent (rotated) refresh token was
// presented again so far: each one made the server revoke the grant (RFC
// 9700 reuse detection). A client that never reuses a refresh token keeps
// it at zero.
func (as *AS) RefreshReuses(ctx context.Context) (int, error) {
	s, err := as.stats(ctx)
	return s.Reuses, err
}

type stats struct {
	Refreshes       int `json:"refreshes"`
	RefreshAttempts int `json:"refreshAttempts"`
	Reuses          int `json:"reuses"`
}

func (as *AS) stats(ctx context.Context) (stats, error) {
	var s stats
	resp, err := get(ctx, http.DefaultClient, as.Issuer+"/test/stats")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("GET /test/stats: HTTP %d", resp.StatusCode)
	}
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

func (as *AS) post(ctx context.Context, path string, form url.Values) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.Issuer+path, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: HTTP %d: %s", path, resp.StatusCode, bytes.TrimSpace(body))
	}
	return nil
}

// StartResourceServer runs hermes-testserver over streamable HTTP on
// 127.0.0.1 as a protected resource of as (--oauth-issuer), with extra flags
// args (for example "--oauth-scopes", "mcp:read"), until the test ends, and
// returns its MCP URL, http://127.0.0.1:PORT/mcp: the resource to ask
// tokens for.
func (as *AS) StartResourceServer(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(testbin.Path(t, "hermes-testserver"),
		append([]string{"--http", "127.0.0.1:0", "--oauth-issuer", as.Issuer}, args...)...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("hermes-testserver stderr:\n%s", stderr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("hermes-testserver: first line %q, %v\nstderr:\n%s", line, err, stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return base + "/mcp"
}

// syncBuffer is a bytes.Buffer safe for a writer and readers at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
