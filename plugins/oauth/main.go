// Command hermes-auth-oauth is Hermes' OAuth 2.1 auth plugin: discovery
// per the MCP authorization spec (protected resource metadata, then the
// authorization server's), a client ID metadata document, dynamic client
// registration or a configured client, PKCE S256, RFC 8707 resource and
// RFC 9207 iss checks, the loopback callback with paste-back for headless
// hosts, the device authorization grant, refresh under a cross-process
// lock, step-up on insufficient_scope, revocation on logout, and the
// client credentials grant for machine identities. Tokens live in the
// host's token folder, 0600, sealed when the host gives a key
// (auth.Config.Seal); a host with its own callback (a gateway) logs people
// in through it in two steps (auth.LoginOptions.RedirectURI).
package main

import (
	"context"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
)

func main() {
	log := sdk.NewPluginLogger("oauth")
	auth.Serve(func(ctx context.Context, cfg auth.Config) (auth.Authenticator, error) {
		return open(ctx, cfg, log)
	}, sdk.WithLogger(log))
}
