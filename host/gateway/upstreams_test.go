package gateway_test

// End-to-end test of per-person upstream credentials through real
// processes: a real authorization server (oidc-provider on loopback), the
// Go test server as its protected resource over HTTP, the real
// hermes-auth-oauth and hermes-transport-http plugins, and the gateway
// built from a config file; two people log in through the gateway's own
// callback, driving the authorization server's pages as a browser would.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hermes-agent/hermes/host/app"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/credentials"
	"github.com/hermes-agent/hermes/host/gateway"
	"github.com/hermes-agent/hermes/host/gateway/vault"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testoauth"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// operatorUI is the gateway operator at a terminal, for the login of the
// gateway's own that lists the upstream's tools: their browser follows
// the authorization server's redirects to the plugin's loopback callback.
type operatorUI struct{ as *testoauth.AS }

func (u operatorUI) Interactive() bool                             { return true }
func (u operatorUI) OpenURL(ctx context.Context, url string) error { return u.as.Browser(ctx, url) }
func (u operatorUI) Show(context.Context, auth.Notice) error       { return nil }
func (u operatorUI) Ask(ctx context.Context, _ string) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

// urlElicitor is a client's person who accepts every URL-mode
// elicitation and remembers the URLs.
type urlElicitor struct {
	mu   sync.Mutex
	urls []string
}

func (e *urlElicitor) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if req.Params.Mode != mcp.ElicitationModeURL {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
	}
	e.urls = append(e.urls, req.Params.URL)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}}, nil
}

func (e *urlElicitor) seen() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.urls...)
}

// connectEliciting is connect for a client that declares URL-mode
// elicitation (2025-11-25).
func connectEliciting(t *testing.T, base, token string, e *urlElicitor) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion("2025-11-25"), client.WithElicitationHandler(e))
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{URL: &struct{}{}}
	if _, err := c.Initialize(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	return c
}

// whoSent calls the test server's last_auth_header tool as c's person:
// the Authorization header the upstream saw, or the text of the tool
// error the gateway answered instead.
func whoSent(t *testing.T, c *client.Client) (header string, loginText string) {
	t.Helper()
	res, err := c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_notes_last_auth_header"}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", text.String()
	}
	return text.String(), ""
}

var linkRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+/oauth/start\?l=[A-Za-z0-9_-]+`)

// browserLogin is a person's browser given a login link: the gateway
// sends it to the authorization server, which (auto-consenting) sends it
// back to the gateway's callback.
func browserLogin(t *testing.T, as *testoauth.AS, link string) {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	authURL := res.Header.Get("Location")
	if res.StatusCode != http.StatusFound || !strings.HasPrefix(authURL, as.Issuer) {
		t.Fatalf("login link: HTTP %d to %q: %s", res.StatusCode, authURL, body)
	}
	back, err := as.BrowserRedirect(t.Context(), authURL)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(back, gateway.CallbackPath+"?") {
		t.Fatalf("the authorization server sent the browser to %s", back)
	}
	res, err = http.Get(back)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("You have authorized")) {
		t.Fatalf("callback: HTTP %d: %s", res.StatusCode, body)
	}
}

// vaultFiles reads every file of the vault.
func vaultFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Two people and one upstream that takes OAuth: each logs in through the
// gateway's own link and callback (one asked by URL-mode elicitation, one
// by a tool error naming the link), each call reaches the upstream with
// the caller's own token or not at all, the vault holds no token in the
// clear, a wrong vault key at restart is one line and loses nothing, and
// logging one person out leaves the other logged in.
func TestEachPersonCallsWithTheirOwnUpstreamToken(t *testing.T) {
	t.Parallel()
	as := testoauth.Start(t, testoauth.Options{})
	if as == nil {
		return
	}
	testbin.Path(t, "hermes-auth-oauth")
	testbin.Path(t, "hermes-transport-http")
	upstream := as.StartResourceServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	home := t.TempDir()
	tokenOf := map[string]string{"ann": "ann-static-token-0123456789", "ben": "ben-static-token-0123456789"}
	var tokens strings.Builder
	for who, tok := range tokenOf {
		sum := sha256.Sum256([]byte(tok))
		tokens.WriteString("    - {subject: " + who + "@example.com, sha256: \"" + hex.EncodeToString(sum[:]) + "\"}\n")
	}
	cfgText := "mcp_servers:\n  notes:\n    url: " + upstream + "\n    auth: oauth\n    oauth: {client_name: hermes gateway e2e}\n" +
		"gateway:\n  resource: " + base + "/mcp\n  tokens:\n" + tokens.String() +
		"  policy:\n    - {allow: {tools: [\"*\"]}}\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	vaultKey := make([]byte, 32)
	_, _ = rand.Read(vaultKey)
	env := []string{"HERMES_HOME=" + home, "HOME=" + t.TempDir(), "HERMES_PLUGIN_PATH=" + testbin.Dir(t), "PATH=" + os.Getenv("PATH"),
		"HERMES_GATEWAY_SESSION_KEY=" + strings.Repeat("s", 32)}
	factory := func(extra ...string) *app.Factory {
		f := app.New(app.Options{Env: append(append([]string{}, env...), extra...), Dir: t.TempDir(), Stderr: io.Discard})
		t.Cleanup(func() { f.Close(false) })
		return f
	}
	build := func(f *app.Factory) (*gateway.Built, []*config.Server, error) {
		cfg, err := f.Config()
		if err != nil {
			t.Fatal(err)
		}
		gw, err := config.LoadGateway(home, f.ConfigEnv())
		if err != nil {
			t.Fatal(err)
		}
		b, err := gateway.Build(t.Context(), gateway.Setup{F: f, Servers: cfg.Servers, Block: gw, Stdout: io.Discard, Version: "test"})
		return b, cfg.Servers, err
	}
	goodKey := "HERMES_GATEWAY_VAULT_KEY=" + base64.StdEncoding.EncodeToString(vaultKey)

	if _, _, err := build(factory()); err == nil || !strings.Contains(err.Error(), "$HERMES_GATEWAY_VAULT_KEY is not set") {
		t.Fatalf("without a vault key: %v", err)
	}

	// The operator's own login, in the gateway's home as for one person,
	// lists the upstream's tools; calls never use it.
	f := factory(goodKey)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cfg, _ := f.Config()
	op := credentials.New(credentials.Options{Home: home, Supervisor: f.Supervisor(), Logger: f.Log, UI: operatorUI{as}})
	srv, err := op.For(ctx, cfg.Servers[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Login(ctx, auth.LoginOptions{}); err != nil {
		t.Fatalf("operator login: %v", err)
	}
	op.Close()
	var operatorFile struct {
		AccessToken string `json:"access_token"`
	}
	raw, err := os.ReadFile(filepath.Join(home, auth.TokenDirName, "notes.json"))
	if err != nil || json.Unmarshal(raw, &operatorFile) != nil || operatorFile.AccessToken == "" {
		t.Fatalf("operator token: %v", err)
	}

	b, servers, err := build(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	sctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go func() { _ = b.Serve(sctx, ln, 0) }()

	annE := &urlElicitor{}
	ann := connectEliciting(t, base, tokenOf["ann"], annE)
	ben := connect(t, base, tokenOf["ben"], "2026-07-28")

	// Neither has authorized the upstream: ann's client is asked to open
	// the link (URL-mode elicitation), ben's call names it.
	if h, text := whoSent(t, ann); h != "" || !strings.Contains(text, "Finish logging in") {
		t.Fatalf("ann before login: header %q, text %q", h, text)
	}
	annLinks := annE.seen()
	if len(annLinks) != 1 || !linkRE.MatchString(annLinks[0]) {
		t.Fatalf("ann's elicitations: %v", annLinks)
	}
	h, text := whoSent(t, ben)
	benLink := linkRE.FindString(text)
	if h != "" || benLink == "" {
		t.Fatalf("ben before login: header %q, text %q", h, text)
	}

	browserLogin(t, as, annLinks[0])
	annHeader, text := whoSent(t, ann)
	if !strings.HasPrefix(annHeader, "Bearer ") || text != "" || strings.Contains(annHeader, operatorFile.AccessToken) {
		t.Fatalf("ann after login: header %q, text %q", annHeader, text)
	}
	annToken := strings.TrimPrefix(annHeader, "Bearer ")
	// Ben is still asked to log in: ann's token is never his.
	if h, text := whoSent(t, ben); h != "" || linkRE.FindString(text) == "" || strings.Contains(text, annToken) {
		t.Fatalf("ben after ann's login: header %q, text %q", h, text)
	}
	// A link is its person's: ben's link, opened, logs ben in.
	browserLogin(t, as, benLink)
	benHeader, _ := whoSent(t, ben)
	if !strings.HasPrefix(benHeader, "Bearer ") || benHeader == annHeader || strings.Contains(benHeader, operatorFile.AccessToken) {
		t.Fatalf("ben after login: %q (ann's %q)", benHeader, annHeader)
	}
	if again, _ := whoSent(t, ann); again != annHeader {
		t.Fatalf("ann's second call went out with %q, not her token", again)
	}

	// At rest: nothing of either token, nor who logged in.
	vdir := filepath.Join(home, vault.DirName)
	files := vaultFiles(t, vdir)
	if len(files) < 3 {
		t.Fatalf("vault files: %d", len(files))
	}
	benToken := strings.TrimPrefix(benHeader, "Bearer ")
	for p, content := range files {
		for _, secret := range []string{annToken, benToken, strings.Split(annToken, ".")[1], strings.Split(benToken, ".")[2], "ann@example.com", "ben@example.com"} {
			if bytes.Contains(content, []byte(secret)) || strings.Contains(p, secret) {
				t.Fatalf("%s holds %.20q at rest", p, secret)
			}
		}
	}

	// A restart with another vault key: one line naming the variable, and
	// nothing changed.
	otherKey := make([]byte, 32)
	_, _ = rand.Read(otherKey)
	_, _, err = build(factory("HERMES_GATEWAY_VAULT_KEY=" + hex.EncodeToString(otherKey)))
	if err == nil || !strings.Contains(err.Error(), "$HERMES_GATEWAY_VAULT_KEY does not open the vault") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("another vault key: %v", err)
	}
	after := vaultFiles(t, vdir)
	if len(after) != len(files) {
		t.Fatalf("a wrong key changed the vault: %d files, then %d", len(files), len(after))
	}
	for p, content := range files {
		if !bytes.Equal(after[p], content) {
			t.Fatalf("a wrong key changed %s", p)
		}
	}

	// Logging ann out removes her tokens only.
	res, err := gateway.Logout(ctx, f, openVault(t, vdir, vaultKey), servers, "ann@example.com", "")
	if err != nil || len(res) != 1 || res[0].Server != "notes" || res[0].Removed == 0 {
		t.Fatalf("logout: %+v %v", res, err)
	}
	if h, text := whoSent(t, ann); h != "" || !strings.Contains(text, "Finish logging in") {
		t.Fatalf("ann after logout: header %q, text %q", h, text)
	}
	if h, _ := whoSent(t, ben); h != benHeader {
		t.Fatalf("ben after ann's logout: %q", h)
	}
}

func openVault(t *testing.T, dir string, key []byte) *vault.Vault {
	t.Helper()
	v, err := vault.Open(dir, key)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
