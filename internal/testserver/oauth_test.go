package testserver_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hermes-agent/hermes/internal/testserver"
)

// fakeAS is an authorization server reduced to what a resource server
// reads (RFC 8414 metadata and a JWKS), minting JWT access tokens in Go.
type fakeAS struct {
	t   *testing.T
	srv *httptest.Server

	mu   sync.Mutex
	keys map[string]*rsa.PrivateKey // published, by kid
}

func newFakeAS(t *testing.T) *fakeAS {
	f := &fakeAS{t: t, keys: map[string]*rsa.PrivateKey{}}
	f.addKey("k1")
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": f.srv.URL, "jwks_uri": f.srv.URL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var keys []map[string]string
		for kid, k := range f.keys {
			keys = append(keys, map[string]string{
				"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
				"n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
				"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes()),
			})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAS) addKey(kid string) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	f.keys[kid] = k
	f.mu.Unlock()
	return k
}

// token mints a JWT access token; edit changes header and claims first.
func (f *fakeAS) token(kid string, key *rsa.PrivateKey, aud, scope string, edit func(header, claims map[string]any)) string {
	now := time.Now().Unix()
	header := map[string]any{"alg": "RS256", "typ": "at+jwt", "kid": kid}
	claims := map[string]any{"iss": f.srv.URL, "sub": "alice", "aud": aud, "scope": scope, "iat": now, "exp": now + 3600, "client_id": "c1"}
	if edit != nil {
		edit(header, claims)
	}
	if key == nil {
		f.mu.Lock()
		key = f.keys[kid]
		f.mu.Unlock()
	}
	seg := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signing := seg(header) + "." + seg(claims)
	digest := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		f.t.Fatal(err)
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// rawPost posts one JSON-RPC request with an optional bearer token.
func rawPost(t *testing.T, url, token, session, body string) (status int, challenge, sessionID, text string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", legacy)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), resp.Header.Get("Mcp-Session-Id"), string(raw)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func TestOAuthResource(t *testing.T) {
	t.Parallel()
	as := newFakeAS(t)
	base := startHTTP(t, "--http", "127.0.0.1:0", "--oauth-issuer", as.srv.URL)
	mcpURL := base + testserver.MCPPath
	prm := base + testserver.ProtectedResourcePath

	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	resp, err := http.Get(prm)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if meta.Resource != mcpURL || !slices.Equal(meta.AuthorizationServers, []string{as.srv.URL}) ||
		!slices.Equal(meta.ScopesSupported, []string{"mcp:read", "mcp:admin"}) {
		t.Fatalf("metadata %+v", meta)
	}

	status, challenge, _, _ := rawPost(t, mcpURL, "", "", initBody)
	if want := fmt.Sprintf(`Bearer resource_metadata=%q, scope="mcp:read"`, prm); status != http.StatusUnauthorized || challenge != want {
		t.Fatalf("no token: %d %q, want 401 %q", status, challenge, want)
	}

	read := as.token("k1", nil, mcpURL, "mcp:read", nil)
	status, _, session, body := rawPost(t, mcpURL, read, "", initBody)
	if status != http.StatusOK || session == "" {
		t.Fatalf("initialize with a token: %d %s", status, body)
	}
	status, _, _, body = rawPost(t, mcpURL, read, session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if status != http.StatusOK || !strings.Contains(body, `"`+testserver.AdminTool+`"`) {
		t.Fatalf("tools/list: %d %s", status, body)
	}
	adminCall := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"admin_echo","arguments":{"message":"hey"}}}`
	status, challenge, _, _ = rawPost(t, mcpURL, read, session, adminCall)
	if want := fmt.Sprintf(`Bearer error="insufficient_scope", resource_metadata=%q, scope="mcp:read mcp:admin"`, prm); status != http.StatusForbidden || challenge != want {
		t.Fatalf("admin_echo without mcp:admin: %d %q, want 403 %q", status, challenge, want)
	}
	admin := as.token("k1", nil, mcpURL, "mcp:read mcp:admin", nil)
	if status, _, _, body = rawPost(t, mcpURL, admin, session, adminCall); status != http.StatusOK || !strings.Contains(body, `"hey"`) {
		t.Fatalf("admin_echo with mcp:admin: %d %s", status, body)
	}
	// The tools a token may call go through mcp-go as usual.
	c := httpClient(t, mcpURL, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + read}))
	initialize(t, c, legacy)
	if got := callText(t, c, "echo", map[string]any{"message": "m"}); got != "m" {
		t.Errorf("echo = %q", got)
	}

	// A key the resource server has not seen yet is fetched.
	as.addKey("k2")
	if status, _, _, body = rawPost(t, mcpURL, as.token("k2", nil, mcpURL, "mcp:read", nil), "", initBody); status != http.StatusOK {
		t.Fatalf("token of a new key: %d %s", status, body)
	}

	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	invalid := map[string]string{
		"expired":        as.token("k1", nil, mcpURL, "mcp:read", func(_, c map[string]any) { c["exp"] = time.Now().Unix() - 1 }),
		"other audience": as.token("k1", nil, base+"/other", "mcp:read", nil),
		"other issuer":   as.token("k1", nil, mcpURL, "mcp:read", func(_, c map[string]any) { c["iss"] = "http://127.0.0.1:1" }),
		"bad signature":  as.token("k1", other, mcpURL, "mcp:read", nil),
		"unknown key":    as.token("k9", other, mcpURL, "mcp:read", nil),
		"id token typ":   as.token("k1", nil, mcpURL, "mcp:read", func(h, _ map[string]any) { h["typ"] = "JWT" }),
		"alg none":       as.token("k1", nil, mcpURL, "mcp:read", func(h, _ map[string]any) { h["alg"] = "none" }),
		"opaque":         "opaque-token-value",
	}
	for name, tok := range invalid {
		status, challenge, _, _ := rawPost(t, mcpURL, tok, "", initBody)
		if status != http.StatusUnauthorized || !strings.HasPrefix(challenge, `Bearer error="invalid_token", error_description=`) ||
			!strings.HasSuffix(challenge, fmt.Sprintf(`resource_metadata=%q, scope="mcp:read"`, prm)) {
			t.Errorf("%s: %d %q, want 401 invalid_token", name, status, challenge)
		}
	}
}

func TestOAuthResourceScopes(t *testing.T) {
	t.Parallel()
	as := newFakeAS(t)
	base := startHTTP(t, "--http", "127.0.0.1:0", "--oauth-issuer", as.srv.URL, "--oauth-scopes", "files:read,files:list", "--oauth-admin-scope", "files:write")
	mcpURL := base + testserver.MCPPath
	prm := base + testserver.ProtectedResourcePath
	status, challenge, _, _ := rawPost(t, mcpURL, as.token("k1", nil, mcpURL, "files:read", nil), "", initBody)
	if want := fmt.Sprintf(`Bearer error="insufficient_scope", resource_metadata=%q, scope="files:read files:list"`, prm); status != http.StatusForbidden || challenge != want {
		t.Fatalf("token without every base scope: %d %q, want 403 %q", status, challenge, want)
	}
	if status, _, _, body := rawPost(t, mcpURL, as.token("k1", nil, mcpURL, "files:list files:read", nil), "", initBody); status != http.StatusOK {
		t.Fatalf("token with the base scopes: %d %s", status, body)
	}
}

func TestOAuthFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--oauth-issuer", "http://127.0.0.1:1"},
		{"--http", "127.0.0.1:0", "--oauth-issuer", "127.0.0.1:1"},
		{"--http", "127.0.0.1:0", "--oauth-issuer", "http://127.0.0.1:1", "--require-bearer", "x"},
		{"--sse", "127.0.0.1:0", "--oauth-issuer", "http://127.0.0.1:1"},
		{"--http", "127.0.0.1:0", "--oauth-issuer", "http://127.0.0.1:1", "--hang-list"},
	} {
		if _, err := testserver.ParseConfig(args, "", nil); err == nil {
			t.Errorf("ParseConfig(%q) accepted", args)
		}
	}
	cfg, err := testserver.ParseConfig([]string{"--http", "127.0.0.1:0", "--oauth-issuer", "http://127.0.0.1:1"}, "", nil)
	if err != nil || !cfg.Server.AdminTool || !slices.Equal(cfg.OAuthScopes, []string{"mcp:read"}) || cfg.OAuthAdminScope != "mcp:admin" {
		t.Fatalf("ParseConfig = %+v, %v", cfg, err)
	}
	// Without --oauth-issuer there is no admin_echo.
	c := stdioClient(t, legacy, nil)
	if got := callText(t, c, "echo", map[string]any{"message": "x"}); got != "x" {
		t.Fatal(got)
	}
	ctx := t.Context()
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name == testserver.AdminTool {
			t.Error("admin_echo listed without --oauth-issuer")
		}
	}
}
