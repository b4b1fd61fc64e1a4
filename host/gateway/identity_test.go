package gateway_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/gateway"
	"github.com/hermes-agent/hermes/host/gateway/identity"
	"github.com/hermes-agent/hermes/host/gateway/policy"
	"github.com/hermes-agent/hermes/internal/testoauth"
)

// byScope: a token with scope mcp:admin may call every tool, group
// support only echo.
func byScope(t testing.TB) *policy.Policy {
	return compile(t, policy.Rule{Effect: policy.Allow, Scopes: []string{"mcp:admin"}, Tools: []string{"*"}},
		policy.Rule{Effect: policy.Allow, Groups: []string{"support"}, Tools: []string{"mcp_*_echo"}})
}

// The gateway as an OAuth 2.1 resource server in front of the real Go
// test server: alice's JWT from a real authorization server (oidc-provider
// on loopback) and bob's static token each see their own tools; a token
// for another resource, an unsigned one, and none at all are refused with
// the challenge that names the resource metadata, which is served.
func TestRealIssuerAndStaticToken(t *testing.T) {
	t.Parallel()
	as := testoauth.Start(t, testoauth.Options{})
	if as == nil {
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	resource := base + "/mcp"
	bobToken := "bob-static-token-0123456789"
	sum := sha256.Sum256([]byte(bobToken))
	auth, err := identity.New(identity.Config{Resource: resource, Issuers: []identity.IssuerConfig{{Issuer: as.Issuer}},
		Tokens: []identity.StaticToken{{Subject: "bob", SHA256: hex.EncodeToString(sum[:]), Groups: []string{"support"}}}}, identity.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := sessionIDs(t)
	g, err := gateway.New(gateway.Options{Backend: &gateway.Registries{Shared: liveRegistry(t)}, Authenticate: auth.Middleware,
		Policy: byScope(t), SessionIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range auth.MetadataPaths() {
		g.Handle("GET "+p, auth.MetadataHandler())
	}
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go func() { _ = g.Serve(ctx, ln, time.Second) }()

	aliceToken, err := as.AccessToken(t.Context(), resource, "mcp:read", "mcp:admin")
	if err != nil {
		t.Fatal(err)
	}
	alice, bob := connect(t, base, aliceToken, "2026-07-28"), connect(t, base, bobToken, "2025-11-25")
	if an, bn := names(t, alice), names(t, bob); len(an) < 3 || !slices.Equal(bn, []string{"mcp_ts_echo"}) {
		t.Fatalf("alice sees %v, bob %v", an, bn)
	}

	other, err := as.AccessToken(t.Context(), "http://127.0.0.1:9/elsewhere", "mcp:read")
	if err != nil {
		t.Fatal(err)
	}
	claims := base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"` + as.Issuer + `","sub":"alice","aud":"` + resource + `","exp":4102444800}`))
	unsigned := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + claims + "."
	for name, tok := range map[string]string{"another resource's token": other, "an unsigned token": unsigned, "no token": ""} {
		req, _ := http.NewRequest(http.MethodPost, resource, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		challenge := res.Header.Get("WWW-Authenticate")
		if res.StatusCode != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`) {
			t.Errorf("%s: HTTP %d, challenge %q", name, res.StatusCode, challenge)
		}
		if tok != "" && (strings.Contains(string(body), tok) || strings.Contains(challenge, tok)) {
			t.Errorf("%s: the answer repeats the token", name)
		}
	}

	res, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var md struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := json.NewDecoder(res.Body).Decode(&md); err != nil || md.Resource != resource || !slices.Equal(md.AuthorizationServers, []string{as.Issuer}) {
		t.Fatalf("resource metadata: %v %+v", err, md)
	}
}
