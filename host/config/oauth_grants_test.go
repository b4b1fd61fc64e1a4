package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestOAuthGrantMessages(t *testing.T) {
	pre := "a:\n    url: https://x/mcp\n    auth: oauth\n    oauth: "
	cases := map[string]string{
		"{grant_type: password}":                                                             `server "a": key "oauth.grant_type": want authorization_code, client_credentials, jwt_bearer or id_jag, got "password"`,
		"{grant_type: client_credentials, client_id: c}":                                     `server "a": key "oauth.grant_type": client_credentials needs oauth.client_id, and oauth.client_secret or oauth.private_key_file`,
		"{grant_type: jwt_bearer, client_id: c}":                                             `server "a": key "oauth.grant_type": jwt_bearer needs oauth.client_id, and oauth.assertion_file or oauth.assertion_command`,
		"{grant_type: id_jag, client_id: c, assertion_file: /t}":                             `server "a": key "oauth.grant_type": id_jag needs oauth.client_id, oauth.idp_token_endpoint, and`,
		"{assertion_file: /t}":                                                               `server "a": key "oauth.grant_type": oauth.assertion_file and oauth.assertion_command apply to grant_type jwt_bearer or id_jag`,
		"{grant_type: jwt_bearer, client_id: c, assertion_file: /t, assertion_command: [x]}": `server "a": key "oauth.assertion_file": oauth.assertion_command is set too`,
		"{grant_type: jwt_bearer, client_id: c, assertion_command: 'print-token | tr -d x'}": `server "a": key "oauth.assertion_command": want a plain command with arguments`,
		"{grant_type: jwt_bearer, client_id: c, assertion_command: 'echo $TOKEN'}":           `server "a": key "oauth.assertion_command": want a plain command with arguments`,
		"{grant_type: jwt_bearer, client_id: c, assertion_command: []}":                      `server "a": key "oauth.assertion_command": want a command and its arguments`,
		"{signing_alg: HS256, private_key_file: /k}":                                         `server "a": key "oauth.signing_alg": want one of ES256`,
		"{private_key_id: k1}":                                                               `server "a": key "oauth.private_key_file": oauth.private_key_id and oauth.signing_alg sign with a key`,
		"{grant_type: id_jag, client_id: c, assertion_file: /t, idp_token_endpoint: 'idp'}":  `server "a": key "oauth.idp_token_endpoint": want the IdP's token endpoint, an http(s) URL, got "idp"`,
		"{client_id: c, idp_client_id: i}":                                                   `server "a": key "oauth.grant_type": the oauth.idp_* keys apply to grant_type id_jag`,
	}
	for body, want := range cases {
		cfg, _ := loadString(t, "mcp_servers:\n  "+pre+body+"\n")
		bad := cfg.Server("a")
		if bad == nil || bad.Err == nil || !strings.HasPrefix(bad.Err.Error(), want) {
			t.Errorf("%s:\n got  %v\n want %s", body, bad.Err, want)
			continue
		}
		if strings.Contains(bad.Err.Error(), "\n") {
			t.Errorf("%s: message has several lines", body)
		}
	}
}

func TestOAuthGrantKeys(t *testing.T) {
	cfg, h := loadString(t, `mcp_servers:
  wif:
    url: https://x/mcp
    auth: oauth
    oauth:
      grant_type: jwt_bearer
      client_id: c
      assertion_command: gcloud auth print-identity-token "--audiences=https://as.example/a b" 'x y'
  jag:
    url: https://x/mcp
    auth: oauth
    oauth:
      grant_type: id_jag
      client_id: c
      client_secret: s
      assertion_file: ~/id_token
      idp_token_endpoint: https://idp.example/token
      idp_client_id: i
      idp_client_secret: is
  cc:
    url: https://x/mcp
    auth: oauth
    oauth:
      grant_type: client_credentials
      client_id: c
      private_key_file: ~/k.pem
      private_key_id: k1
      signing_alg: PS256
`)
	for _, s := range cfg.Servers {
		if s.Err != nil || len(s.Unknown) > 0 {
			t.Fatalf("%s: %v, unknown %v", s.Name, s.Err, s.Unknown)
		}
	}
	if got := cfg.Server("wif").OAuth.AssertionCommand; !reflect.DeepEqual(got, []string{"gcloud", "auth", "print-identity-token", "--audiences=https://as.example/a b", "x y"}) {
		t.Errorf("assertion_command split as %q", got)
	}
	g := cfg.Server("jag").OAuth.OAuthGrant
	if !strings.HasSuffix(g.AssertionFile, "/id_token") || strings.HasPrefix(g.AssertionFile, "~") || g.IdPTokenEndpoint != "https://idp.example/token" || g.IdPClientID != "i" || g.IdPClientSecret != "is" {
		t.Errorf("id_jag keys: %+v (home %s)", g, h)
	}
	c := cfg.Server("cc").OAuth
	if c.GrantType != GrantClientCredentials || strings.HasPrefix(c.PrivateKeyFile, "~") || c.PrivateKeyID != "k1" || c.SigningAlg != "PS256" {
		t.Errorf("private key keys: %+v", c)
	}
	if IsMachineGrant(GrantIDJAG) || !IsMachineGrant(GrantJWTBearer) || !IsMachineGrant(GrantClientCredentials) {
		t.Error("IsMachineGrant: id_jag is a person's, jwt_bearer and client_credentials the machine's")
	}
}
