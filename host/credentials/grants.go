package credentials

import "github.com/hermes-agent/hermes/host/config"

// grantSettings adds the keys of the grants without a browser and of
// private_key_jwt (config.OAuthGrant) to m, the oauth: block the plugin
// reads.
func grantSettings(m map[string]any, g config.OAuthGrant) {
	for k, v := range map[string]string{
		"assertion_file": g.AssertionFile, "idp_token_endpoint": g.IdPTokenEndpoint, "idp_client_id": g.IdPClientID,
		"idp_client_secret": g.IdPClientSecret, "private_key_file": g.PrivateKeyFile, "private_key_id": g.PrivateKeyID,
		"signing_alg": g.SigningAlg,
	} {
		if v != "" {
			m[k] = v
		}
	}
	if len(g.AssertionCommand) > 0 {
		argv := make([]any, len(g.AssertionCommand))
		for i, a := range g.AssertionCommand {
			argv[i] = a
		}
		m["assertion_command"] = argv
	}
}
