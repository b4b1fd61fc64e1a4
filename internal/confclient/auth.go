package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
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
// grant.
func oauthFor(srv *config.Server, scenario string, log hclog.Logger) {
	srv.Auth = "oauth"
	srv.OAuth = config.OAuthSettings{ClientName: "hermes conformance client", Timeout: 30 * time.Second, ClientMetadataURL: clientMetadataURL}
	raw := os.Getenv("MCP_CONFORMANCE_CONTEXT")
	if raw == "" {
		return
	}
	var c struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		log.Warn("MCP_CONFORMANCE_CONTEXT is not JSON", "error", err)
		return
	}
	srv.OAuth.ClientID, srv.OAuth.ClientSecret = c.ClientID, c.ClientSecret
	if strings.Contains(scenario, "client-credentials") {
		srv.OAuth.GrantType = "client_credentials"
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
