package config

import (
	"net/url"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Values of oauth.grant_type.
const (
	// GrantAuthorizationCode: a person logs in in a browser (the default).
	GrantAuthorizationCode = "authorization_code"
	// GrantClientCredentials: the configured client is the identity.
	GrantClientCredentials = "client_credentials"
	// GrantJWTBearer: workload identity, a platform-issued JWT (RFC 7523).
	GrantJWTBearer = "jwt_bearer"
	// GrantIDJAG: enterprise-managed authorization, the person's ID token
	// exchanged at the enterprise IdP for an ID-JAG.
	GrantIDJAG = "id_jag"
)

// grantOAuthKeys are the keys of the oauth: block for the grants without
// a browser and for private_key_jwt client authentication.
var grantOAuthKeys = map[string]bool{
	"assertion_file": true, "assertion_command": true, "idp_token_endpoint": true, "idp_client_id": true,
	"idp_client_secret": true, "private_key_file": true, "private_key_id": true, "signing_alg": true,
}

// signingAlgs are the JWS algorithms of oauth.signing_alg.
var signingAlgs = map[string]bool{
	"ES256": true, "ES384": true, "ES512": true, "RS256": true, "RS384": true, "RS512": true,
	"PS256": true, "PS384": true, "PS512": true, "EdDSA": true,
}

// OAuthGrant is the part of the oauth: block that the grants without a
// browser (client_credentials, jwt_bearer, id_jag) and private_key_jwt
// client authentication read.
type OAuthGrant struct {
	// AssertionFile (re-read at each token request) or AssertionCommand
	// (run without a shell; its standard output) give the jwt_bearer
	// grant's JWT, or id_jag's ID token.
	AssertionFile    string
	AssertionCommand []string
	// IdPTokenEndpoint is where id_jag exchanges the ID token, as client
	// IdPClientID (default: client_id) with IdPClientSecret.
	IdPTokenEndpoint, IdPClientID, IdPClientSecret string
	// PrivateKeyFile is the PEM key (0600) the client signs its
	// private_key_jwt assertions with; PrivateKeyID is their kid,
	// SigningAlg their algorithm (default: the key's).
	PrivateKeyFile, PrivateKeyID, SigningAlg string
}

// IsMachineGrant reports whether grant's identity is the client's or the
// workload's own (client_credentials, jwt_bearer), not a person's: no
// browser opens, and a gateway uses one token for everyone.
func IsMachineGrant(grant string) bool {
	return grant == GrantClientCredentials || grant == GrantJWTBearer
}

// oauthGrant reads oauth.grant_type and the grant keys of the oauth:
// block om (ro as written) into o, and checks that the grant has what it
// needs.
func (d *decoder) oauthGrant(o *OAuthSettings, om map[string]any, ro any) {
	o.GrantType = d.str("oauth.grant_type", om["grant_type"], sub(ro, "grant_type"))
	g := &o.OAuthGrant
	g.AssertionFile = d.expandHome(strings.TrimSpace(d.str("oauth.assertion_file", om["assertion_file"], sub(ro, "assertion_file"))))
	switch c := om["assertion_command"].(type) {
	case nil:
	case string:
		g.AssertionCommand = d.commandLine("oauth.assertion_command", c)
	default:
		g.AssertionCommand = d.strList("oauth.assertion_command", c, sub(ro, "assertion_command"))
		if len(g.AssertionCommand) == 0 || strings.TrimSpace(g.AssertionCommand[0]) == "" {
			d.fail("oauth.assertion_command", "want a command and its arguments, got an empty list")
		}
	}
	g.IdPTokenEndpoint = strings.TrimSpace(d.str("oauth.idp_token_endpoint", om["idp_token_endpoint"], sub(ro, "idp_token_endpoint")))
	g.IdPClientID = d.str("oauth.idp_client_id", om["idp_client_id"], sub(ro, "idp_client_id"))
	g.IdPClientSecret = d.str("oauth.idp_client_secret", om["idp_client_secret"], sub(ro, "idp_client_secret"))
	g.PrivateKeyFile = d.expandHome(strings.TrimSpace(d.str("oauth.private_key_file", om["private_key_file"], sub(ro, "private_key_file"))))
	g.PrivateKeyID = d.str("oauth.private_key_id", om["private_key_id"], sub(ro, "private_key_id"))
	g.SigningAlg = strings.TrimSpace(d.str("oauth.signing_alg", om["signing_alg"], sub(ro, "signing_alg")))

	hasAssertion := g.AssertionFile != "" || len(g.AssertionCommand) > 0
	switch {
	case g.AssertionFile != "" && len(g.AssertionCommand) > 0:
		d.fail("oauth.assertion_file", "oauth.assertion_command is set too; keep one of the two")
	case g.SigningAlg != "" && !signingAlgs[g.SigningAlg]:
		d.fail("oauth.signing_alg", "want one of ES256, ES384, ES512, RS256, RS384, RS512, PS256, PS384, PS512, EdDSA, got %s; or leave it out to use the key's own", got(sub(ro, "signing_alg")))
	case g.PrivateKeyFile == "" && (g.PrivateKeyID != "" || g.SigningAlg != ""):
		d.fail("oauth.private_key_file", "oauth.private_key_id and oauth.signing_alg sign with a key: set oauth.private_key_file to the PEM key")
	case g.IdPTokenEndpoint != "" && !httpURL(g.IdPTokenEndpoint):
		d.fail("oauth.idp_token_endpoint", "want the IdP's token endpoint, an http(s) URL, got %s", got(sub(ro, "idp_token_endpoint")))
	}
	need := func(what string) {
		d.fail("oauth.grant_type", "%s needs %s", o.GrantType, what)
	}
	switch o.GrantType {
	case "", GrantAuthorizationCode:
	case GrantClientCredentials:
		if o.ClientID == "" || o.ClientSecret == "" && g.PrivateKeyFile == "" {
			need("oauth.client_id, and oauth.client_secret or oauth.private_key_file")
		}
	case GrantJWTBearer:
		if o.ClientID == "" || !hasAssertion {
			need("oauth.client_id, and oauth.assertion_file or oauth.assertion_command (the workload's JWT)")
		}
	case GrantIDJAG:
		if o.ClientID == "" || g.IdPTokenEndpoint == "" || !hasAssertion {
			need("oauth.client_id, oauth.idp_token_endpoint, and oauth.assertion_file or oauth.assertion_command (the person's ID token)")
		}
	default:
		d.fail("oauth.grant_type", "want authorization_code, client_credentials, jwt_bearer or id_jag, got %s", got(sub(ro, "grant_type")))
	}
	isAssertionGrant := o.GrantType == GrantJWTBearer || o.GrantType == GrantIDJAG
	switch {
	case hasAssertion && !isAssertionGrant:
		d.fail("oauth.grant_type", "oauth.assertion_file and oauth.assertion_command apply to grant_type jwt_bearer or id_jag; set the grant or drop them")
	case (g.IdPTokenEndpoint != "" || g.IdPClientID != "" || g.IdPClientSecret != "") && o.GrantType != GrantIDJAG:
		d.fail("oauth.grant_type", "the oauth.idp_* keys apply to grant_type id_jag; set the grant or drop them")
	}
}

// commandLine splits a command line written as one string into its
// words, the way a POSIX shell would read it but without one: quotes and
// backslashes only; a variable, a substitution, a pipe or a redirection
// is an error (write a list, or a script, for those).
func (d *decoder) commandLine(key, line string) []string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(line), "")
	if err != nil {
		d.fail(key, "cannot read the command line: %v", err)
		return nil
	}
	bad := func() []string {
		d.fail(key, "want a plain command with arguments (quotes allowed; no variables, substitutions, pipes or redirections); write it as a list, or put the rest in a script")
		return nil
	}
	if len(f.Stmts) != 1 {
		return bad()
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(st.Redirs) > 0 || st.Background || st.Negated || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return bad()
	}
	var words []string
	for _, w := range call.Args {
		if !plainWord(w.Parts) {
			return bad()
		}
		s, err := expand.Literal(nil, w)
		if err != nil {
			return bad()
		}
		words = append(words, s)
	}
	return words
}

// plainWord reports whether a word is made of literal text and quotes
// only.
func plainWord(parts []syntax.WordPart) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			if !plainWord(p.Parts) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}
