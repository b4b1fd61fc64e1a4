package credentials_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/internal/testoauth"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// keyClient is a client registered with the authorization server for
// private_key_jwt: its id, and its private key in a 0600 PEM file.
type keyClient struct {
	id, keyFile, pemLine string
}

// registerKeyClient registers, by dynamic client registration, a client
// that authenticates with private_key_jwt (its public key as jwks, kid
// "k1"), for grants.
func (r *rig) registerKeyClient(ctx context.Context, grants ...string) keyClient {
	r.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		r.t.Fatal(err)
	}
	jwk, err := jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}.MarshalJSON()
	if err != nil {
		r.t.Fatal(err)
	}
	meta := map[string]any{
		"client_name":                "hermes e2e private_key_jwt",
		"grant_types":                grants,
		"token_endpoint_auth_method": "private_key_jwt",
		"jwks":                       map[string]any{"keys": []json.RawMessage{jwk}},
		"scope":                      strings.Join(testoauth.DefaultScopes, " "),
	}
	if grants[0] == "authorization_code" {
		meta["application_type"] = "native"
		meta["redirect_uris"] = []string{"http://127.0.0.1/callback"}
		meta["response_types"] = []string{"code"}
	} else {
		meta["response_types"] = []string{}
		meta["redirect_uris"] = []string{}
	}
	id, _ := r.register(ctx, meta)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		r.t.Fatal(err)
	}
	p := filepath.Join(r.t.TempDir(), "client-key.pem")
	pemText := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	if err := os.WriteFile(p, pemText, 0o600); err != nil {
		r.t.Fatal(err)
	}
	return keyClient{id: id, keyFile: p, pemLine: strings.Split(string(pemText), "\n")[1]}
}

// noSecretIn fails when any of secrets appears in the host's and the
// plugins' log.
func (r *rig) noSecretIn(secrets map[string]string) {
	r.t.Helper()
	logs := r.logs.String()
	for what, s := range secrets {
		if s != "" && strings.Contains(logs, s) {
			r.t.Errorf("the %s appears in the log", what)
		}
	}
}

// client_credentials with private_key_jwt at oidc-provider: no browser, a
// token for the resource, a call through the real resource server.
func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	t.Parallel()
	r := newRig(t, testoauth.Options{})
	ctx := ctxFor(t)
	c := r.registerKeyClient(ctx, "client_credentials")
	u := newUI(r.as, false)
	m := r.manager(u, false)
	srv := r.server(func(o *config.OAuthSettings) {
		o.GrantType, o.ClientID, o.PrivateKeyFile, o.PrivateKeyID = config.GrantClientCredentials, c.id, c.keyFile, "k1"
	})
	// `hermes mcp login` of a machine grant fetches a token, no browser.
	st := r.login(ctx, m, srv, auth.LoginOptions{})
	if !st.LoggedIn || st.Account != c.id || u.browserOpens() != 0 {
		t.Fatalf("login: %+v, %d browser opens; want a token for %s without a browser", st, u.browserOpens(), c.id)
	}
	s := r.mustConnect(ctx, m, srv)
	mustCall(t, ctx, s, "echo", "machine")
	tok := r.token()
	r.noSecretIn(map[string]string{"private key": c.pemLine, "access token": tok.AccessToken})
}

// authorization_code with private_key_jwt at the token endpoint: a login,
// a call, a refresh (also authenticated by a client assertion), a call.
func TestLoginPrivateKeyJWT(t *testing.T) {
	t.Parallel()
	r := newRig(t, testoauth.Options{})
	ctx := ctxFor(t)
	c := r.registerKeyClient(ctx, "authorization_code", "refresh_token")
	m := r.manager(newUI(r.as, false), false)
	srv := r.server(func(o *config.OAuthSettings) {
		o.ClientID, o.PrivateKeyFile = c.id, c.keyFile
	})
	st := r.login(ctx, m, srv, auth.LoginOptions{})
	checkLoggedIn(t, st, r.as.Issuer, "mcp:read")
	mustCall(t, ctx, r.mustConnect(ctx, m, srv), "echo", "person")
	before := r.token()
	if before.RefreshToken == "" {
		t.Fatal("no refresh token")
	}

	// The next hermes run (a manager of its own: this one keeps the
	// headers it was given until they expire) finds the token expired.
	r.expireToken()
	mustCall(t, ctx, r.mustConnect(ctx, r.manager(nil, false), srv), "echo", "refreshed")
	if n, attempts := r.refreshes(ctx); n != 1 || attempts != 1 {
		t.Fatalf("refreshes %d, attempts %d; want one", n, attempts)
	}
	after := r.token()
	if after.AccessToken == before.AccessToken || after.RefreshToken == before.RefreshToken {
		t.Error("the refresh did not give new tokens")
	}
	r.noSecretIn(map[string]string{"private key": c.pemLine, "access token": before.AccessToken, "refresh token": before.RefreshToken,
		"new access token": after.AccessToken, "new refresh token": after.RefreshToken})
}
