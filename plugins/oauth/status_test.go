package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/plugins/oauth/tokenstore"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// grantRig is an authorization server and an MCP server on loopback, with
// what each answers set by the test, and a plugin logged in to them.
type grantRig struct {
	as, mcp *httptest.Server
	// introspection answers {"active": ...}; "" offers none.
	introspection string
	// refresh is the token endpoint's answer status (200: a new token).
	refresh int
	// mcpStatus is the MCP server's answer to the token.
	mcpStatus int
	refreshes atomic.Int32
	a         *authenticator
}

func newGrantRig(t *testing.T, introspection string, refresh, mcpStatus int, expiresIn int64) *grantRig {
	t.Helper()
	g := &grantRig{introspection: introspection, refresh: refresh, mcpStatus: mcpStatus}
	g.as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/introspect":
			fmt.Fprintf(w, `{"active": %s}`, g.introspection)
		case "/token":
			g.refreshes.Add(1)
			if g.refresh != http.StatusOK {
				w.WriteHeader(g.refresh)
				fmt.Fprint(w, `{"error": "invalid_grant"}`)
				return
			}
			fmt.Fprint(w, `{"access_token": "new-access", "token_type": "Bearer", "refresh_token": "new-refresh", "expires_in": 3600}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(g.as.Close)
	g.mcp = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(g.mcpStatus)
	}))
	t.Cleanup(g.mcp.Close)

	dir := t.TempDir()
	a, err := open(context.Background(), auth.Config{Server: "s", Method: "oauth", URL: g.mcp.URL, TokenDir: dir}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	meta := fmt.Sprintf(`{"issuer": %q, "authorization_endpoint": %q, "token_endpoint": %q`, g.as.URL, g.as.URL+"/authorize", g.as.URL+"/token")
	if introspection != "" {
		meta += fmt.Sprintf(`, "introspection_endpoint": %q`, g.as.URL+"/introspect")
	}
	meta += "}"
	if err := a.store.SaveMeta(&tokenstore.Meta{Issuer: g.as.URL, AuthServer: []byte(meta)}); err != nil {
		t.Fatal(err)
	}
	if err := a.store.SaveClient(&tokenstore.Client{ClientID: "c", Kind: tokenstore.KindDCR, RegisteredFor: g.as.URL}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	tok := &tokenstore.Token{AccessToken: "old-access", TokenType: "Bearer", RefreshToken: "old-refresh", Issuer: g.as.URL,
		ExpiresIn: expiresIn, ExpiresAt: now + expiresIn, ObtainedAt: now}
	if err := a.store.Save(tok); err != nil {
		t.Fatal(err)
	}
	g.a = a
	return g
}

// Status checks the grant: whatever way it can tell, a grant the servers
// refuse is Refused, and one they accept is not.
func TestStatusChecksTheGrant(t *testing.T) {
	for _, tc := range []struct {
		name          string
		introspection string
		refresh       int
		mcp           int
		expiresIn     int64
		refused       bool
		refreshes     int32
	}{
		{"introspection says inactive", "false", http.StatusOK, http.StatusOK, 3600, true, 0},
		{"introspection says active", "true", http.StatusOK, http.StatusOK, 3600, false, 0},
		{"no introspection, near expiry, refresh refused", "", http.StatusBadRequest, http.StatusOK, 30, true, 1},
		{"no introspection, near expiry, refresh works", "", http.StatusOK, http.StatusOK, 30, false, 1},
		{"no introspection, token refused, refresh refused", "", http.StatusBadRequest, http.StatusUnauthorized, 3600, true, 1},
		{"no introspection, token works", "", http.StatusBadRequest, http.StatusOK, 3600, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGrantRig(t, tc.introspection, tc.refresh, tc.mcp, tc.expiresIn)
			if tc.expiresIn == 30 {
				// Within the margin of a 30 s token (3 s): as if 28 s old.
				now := time.Now().Unix()
				tok, _ := g.a.store.Load()
				tok.ObtainedAt, tok.ExpiresAt = now-28, now+2
				if err := g.a.store.Save(tok); err != nil {
					t.Fatal(err)
				}
			}
			st, err := g.a.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Refused != tc.refused || !st.LoggedIn {
				t.Errorf("status %+v; want refused %t", st, tc.refused)
			}
			if tc.refused && !strings.Contains(st.Detail, "expired or revoked") {
				t.Errorf("detail %q", st.Detail)
			}
			// The client is named in words, not as "client: dcr".
			if !tc.refused && st.Detail != "client registered by hermes with the authorization server (dynamic registration)" {
				t.Errorf("detail %q", st.Detail)
			}
			if n := g.refreshes.Load(); n != tc.refreshes {
				t.Errorf("%d refreshes, want %d", n, tc.refreshes)
			}
		})
	}
}

// A refresh does not run while a fresh token is on disk: one written by
// another process after this one read its own near-expiry token is taken
// as it is.
func TestRefreshTakesAFreshTokenOnDisk(t *testing.T) {
	g := newGrantRig(t, "", http.StatusOK, http.StatusOK, 30)
	stale := g.a.current().Clone()
	stale.ExpiresAt = time.Now().Unix() + 1 // near expiry, as this process saw it
	other := &tokenstore.Token{AccessToken: "other-access", TokenType: "Bearer", RefreshToken: "other-refresh", ExpiresIn: 30, ExpiresAt: time.Now().Unix() + 30}
	if err := g.a.store.Save(other); err != nil {
		t.Fatal(err)
	}
	got, err := g.a.refresh(context.Background(), stale, false)
	if err != nil || got.AccessToken != "other-access" {
		t.Fatalf("refresh = %v, %v; want the token on disk", got, err)
	}
	if n := g.refreshes.Load(); n != 0 {
		t.Errorf("%d refreshes, want none", n)
	}
}
