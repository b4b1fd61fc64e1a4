package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// clientMetadataURL is the client ID metadata document the suite's
// basic-cimd scenario expects.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// oauthFor gives the server entry the oauth settings a scenario needs:
// every entry uses hermes-auth-oauth (a server without auth never
// challenges, so nothing changes for it); the scenario's context supplies
// a pre-registered client, and the client-credentials scenarios use that
// grant. The authorization extensions' key material lands in files of
// home, as a deployment would keep it: the client's private key
// (private_key_jwt), the workload's JWT (jwt_bearer), the person's ID
// token (id_jag).
func oauthFor(srv *config.Server, scenario, home string, log hclog.Logger) {
	srv.Auth = "oauth"
	srv.OAuth = config.OAuthSettings{ClientName: "hermes conformance client", Timeout: 30 * time.Second, ClientMetadataURL: clientMetadataURL}
	raw := os.Getenv("MCP_CONFORMANCE_CONTEXT")
	if raw == "" {
		return
	}
	var c struct {
		ClientID         string `json:"client_id"`
		ClientSecret     string `json:"client_secret"`
		PrivateKeyPEM    string `json:"private_key_pem"`
		SigningAlgorithm string `json:"signing_algorithm"`
		// ValidJWT is the workload's token (the wif scenario also hands
		// out wrong_audience_jwt and expired_jwt, for clients that test
		// their refusal; it expects valid_jwt to be used).
		ValidJWT         string `json:"valid_jwt"`
		IdPClientID      string `json:"idp_client_id"`
		IdPIDToken       string `json:"idp_id_token"`
		IdPTokenEndpoint string `json:"idp_token_endpoint"`
	}
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		log.Warn("MCP_CONFORMANCE_CONTEXT is not JSON", "error", err)
		return
	}
	srv.OAuth.ClientID, srv.OAuth.ClientSecret = c.ClientID, c.ClientSecret
	if strings.Contains(scenario, "client-credentials") {
		srv.OAuth.GrantType = config.GrantClientCredentials
	}
	file := func(name, content string) string {
		p := filepath.Join(home, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			log.Error("cannot write the scenario's key material", "file", name, "error", err)
		}
		return p
	}
	if c.PrivateKeyPEM != "" {
		srv.OAuth.PrivateKeyFile = file("client-key.pem", c.PrivateKeyPEM)
		srv.OAuth.SigningAlg = c.SigningAlgorithm
	}
	switch {
	case c.IdPIDToken != "":
		srv.OAuth.GrantType = config.GrantIDJAG
		srv.OAuth.AssertionFile = file("id-token.jwt", c.IdPIDToken)
		srv.OAuth.IdPTokenEndpoint, srv.OAuth.IdPClientID = c.IdPTokenEndpoint, c.IdPClientID
	case c.ValidJWT != "":
		srv.OAuth.GrantType = config.GrantJWTBearer
		srv.OAuth.AssertionFile = file("workload.jwt", c.ValidJWT)
	}
}

// robot is the user of a login: it "opens" the authorization URL the way
// a browser would, and follows the authorization server's redirect to the
// loopback callback. The suite's authorization servers redirect at once.
type robot struct {
	log hclog.Logger
}

func (robot) Interactive() bool { return true }

func (r robot) OpenURL(ctx context.Context, u string) error {
	c := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	for hops := 0; hops < 10; hops++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode >= 400 || loc == "" {
			return nil
		}
		next, err := url.Parse(loc)
		if err != nil {
			return fmt.Errorf("bad redirect: %w", err)
		}
		base, _ := url.Parse(u)
		u = base.ResolveReference(next).String()
	}
	return fmt.Errorf("too many redirects")
}

func (r robot) Show(_ context.Context, n auth.Notice) error {
	r.log.Info("login notice", "text", n.Text)
	return nil
}

func (robot) Ask(ctx context.Context, _ string) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}
