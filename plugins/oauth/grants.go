package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hermes-agent/hermes/plugins/oauth/discovery"
	"github.com/hermes-agent/hermes/plugins/oauth/tokenstore"
	"github.com/hermes-agent/hermes/sdk"
)

// The grants of oauth.grant_type beyond the authorization code, and the
// URNs they send.
const (
	// grantJWTBearer is workload identity: a platform-issued JWT (a
	// Kubernetes projected service-account token, a cloud's identity
	// token) is the authorization grant (RFC 7523 §2.1).
	grantJWTBearer = "jwt_bearer"
	// grantIDJAG is enterprise-managed authorization: the person's ID
	// token is exchanged at the enterprise IdP for an identity assertion
	// authorization grant (ID-JAG, RFC 8693 token exchange), which the MCP
	// server's authorization server takes through the jwt-bearer grant.
	grantIDJAG = "id_jag"

	jwtBearerGrantType     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	tokenExchangeGrantType = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeIDToken       = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG         = "urn:ietf:params:oauth:token-type:id-jag"
)

// grantSettings are the keys of the oauth: block for the grants without a
// browser and for private_key_jwt client authentication.
type grantSettings struct {
	// Assertion is the jwt_bearer grant's JWT, or id_jag's ID token
	// (oauth.assertion_file, oauth.assertion_command).
	Assertion assertionSource
	// IdPTokenEndpoint, IdPClientID and IdPClientSecret are the enterprise
	// IdP of id_jag: where the ID token is exchanged, as which client
	// (IdPClientID defaults to ClientID).
	IdPTokenEndpoint, IdPClientID, IdPClientSecret string
	// PrivateKeyFile, PrivateKeyID and SigningAlg are private_key_jwt:
	// the PEM key, the kid of the assertions, their algorithm.
	PrivateKeyFile, PrivateKeyID, SigningAlg string

	// key is PrivateKeyFile's key, loaded by loadKey.
	key *signingKey
}

// direct reports whether the grant gets a token without a person at a
// browser: client_credentials, jwt_bearer and id_jag (whose ID token comes
// from a file or command).
func (s settings) direct() bool {
	return s.GrantType == grantClientCreds || s.GrantType == grantJWTBearer || s.GrantType == grantIDJAG
}

// parseGrantSettings reads oauth.grant_type and the keys of the grants
// and of private_key_jwt into s, and checks that each grant has what it
// needs.
func parseGrantSettings(m map[string]any, s *settings) error {
	g := &s.grantSettings
	for key, dst := range map[string]*string{
		"assertion_file": &g.Assertion.File, "idp_token_endpoint": &g.IdPTokenEndpoint, "idp_client_id": &g.IdPClientID,
		"idp_client_secret": &g.IdPClientSecret, "private_key_file": &g.PrivateKeyFile, "private_key_id": &g.PrivateKeyID,
		"signing_alg": &g.SigningAlg,
	} {
		v, ok := m[key]
		if !ok || v == nil {
			continue
		}
		x, ok := v.(string)
		if !ok {
			return sdk.NewError(sdk.CodeConfig, "oauth.%s: want a string, got %T", key, v)
		}
		*dst = strings.TrimSpace(x)
	}
	if v, ok := m["assertion_command"]; ok && v != nil {
		l, ok := v.([]any)
		if !ok || len(l) == 0 {
			return sdk.NewError(sdk.CodeConfig, "oauth.assertion_command: want a command and its arguments, got %T", v)
		}
		for _, x := range l {
			a, ok := x.(string)
			if !ok {
				return sdk.NewError(sdk.CodeConfig, "oauth.assertion_command: want strings, got a %T", x)
			}
			g.Assertion.Command = append(g.Assertion.Command, a)
		}
		if strings.TrimSpace(g.Assertion.Command[0]) == "" {
			return sdk.NewError(sdk.CodeConfig, "oauth.assertion_command: the command is empty")
		}
	}
	if g.Assertion.File != "" && len(g.Assertion.Command) > 0 {
		return sdk.NewError(sdk.CodeConfig, "oauth.assertion_file and oauth.assertion_command are both set; keep one")
	}
	if g.PrivateKeyFile == "" && (g.PrivateKeyID != "" || g.SigningAlg != "") {
		return sdk.NewError(sdk.CodeConfig, "oauth.private_key_id and oauth.signing_alg need oauth.private_key_file")
	}
	if g.IdPTokenEndpoint != "" {
		if u, err := url.Parse(g.IdPTokenEndpoint); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return sdk.NewError(sdk.CodeConfig, "oauth.idp_token_endpoint: want an http(s) URL, got %q", shown(g.IdPTokenEndpoint, 200))
		}
	}
	need := func(what string) error {
		return sdk.NewError(sdk.CodeConfig, "oauth.grant_type %s needs %s", s.GrantType, what)
	}
	switch s.GrantType {
	case "", grantAuthCode:
		s.GrantType = grantAuthCode
	case grantClientCreds:
		if s.ClientID == "" || s.ClientSecret == "" && g.PrivateKeyFile == "" {
			return need("oauth.client_id and oauth.client_secret or oauth.private_key_file")
		}
	case grantJWTBearer:
		if s.ClientID == "" || !g.Assertion.configured() {
			return need("oauth.client_id and oauth.assertion_file or oauth.assertion_command (the workload's JWT)")
		}
	case grantIDJAG:
		if s.ClientID == "" || g.IdPTokenEndpoint == "" || !g.Assertion.configured() {
			return need("oauth.client_id, oauth.idp_token_endpoint and oauth.assertion_file or oauth.assertion_command (the person's ID token)")
		}
		if g.IdPClientID == "" {
			g.IdPClientID = s.ClientID
		}
	default:
		return sdk.NewError(sdk.CodeConfig, "oauth.grant_type: want authorization_code, client_credentials, jwt_bearer or id_jag, got %q", shown(s.GrantType, 60))
	}
	if g.Assertion.configured() && s.GrantType != grantJWTBearer && s.GrantType != grantIDJAG {
		return sdk.NewError(sdk.CodeConfig, "oauth.assertion_file and oauth.assertion_command apply to grant_type jwt_bearer or id_jag, not %s", s.GrantType)
	}
	if (g.IdPTokenEndpoint != "" || g.IdPClientSecret != "") && s.GrantType != grantIDJAG {
		return sdk.NewError(sdk.CodeConfig, "oauth.idp_token_endpoint and oauth.idp_client_secret apply to grant_type id_jag, not %s", s.GrantType)
	}
	return nil
}

// loadKey loads oauth.private_key_file, when set.
func (g *grantSettings) loadKey() error {
	if g.PrivateKeyFile == "" {
		return nil
	}
	k, err := loadSigningKey(g.PrivateKeyFile, g.SigningAlg, g.PrivateKeyID)
	if err != nil {
		return err
	}
	g.key = k
	return nil
}

// configuredClient is the client of oauth.client_id at d's authorization
// server: private_key_jwt when oauth.private_key_file is set (the server
// must list it and the key's algorithm when it lists any), else the
// secret's method, else none.
func (a *authenticator) configuredClient(d *discovered) (client, error) {
	supported := d.meta.TokenEndpointAuthMethodsSupported
	k := a.set.key
	if k == nil {
		return client{ID: a.set.ClientID, Secret: a.set.ClientSecret,
			AuthMethod: discovery.SelectAuthMethod(supported, "", a.set.ClientSecret != "")}, nil
	}
	if len(supported) > 0 && !slices.Contains(supported, authPrivateKeyJWT) {
		return client{}, sdk.NewError(sdk.CodeConfig, "the authorization server of '%s' does not accept private_key_jwt (it lists %s); drop oauth.private_key_file or register the client otherwise",
			a.cfg.Server, shown(strings.Join(supported, ", "), 200))
	}
	if algs := signingAlgsSupported(d.meta.Raw); len(algs) > 0 && !slices.Contains(algs, string(k.alg)) {
		return client{}, sdk.NewError(sdk.CodeConfig, "the authorization server of '%s' takes client assertions signed with %s, not %s; set oauth.signing_alg or use another key",
			a.cfg.Server, shown(strings.Join(algs, ", "), 200), k.alg)
	}
	return client{ID: a.set.ClientID, AuthMethod: authPrivateKeyJWT, Key: k, Audience: d.meta.Issuer}, nil
}

// grantState remembers a jwt-bearer grant the authorization server
// refused, so that the same assertion is not sent again: a refused
// workload or ID-JAG grant is reported, not retried (a rotated assertion,
// or a login, tries again).
type grantState struct {
	mu sync.Mutex
	// refused is the sha256 of the assertion refused, err the report.
	refused [sha256.Size]byte
	err     error
}

func (g *grantState) check(assertion string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil && g.refused == sha256.Sum256([]byte(assertion)) {
		return g.err
	}
	return nil
}

func (g *grantState) remember(assertion string, err error) {
	g.mu.Lock()
	g.refused, g.err = sha256.Sum256([]byte(assertion)), err
	g.mu.Unlock()
}

func (g *grantState) forget() {
	g.mu.Lock()
	g.err = nil
	g.mu.Unlock()
}

// final reports whether a token endpoint's refusal is one to report
// rather than retry (RFC 6749 §5.2; the MCP workload identity extension).
func final(err error) bool {
	switch oauthCode(err) {
	case "invalid_grant", "invalid_scope", "unauthorized_client", "invalid_client", "unsupported_grant_type":
		return true
	}
	return false
}

// directTimeout bounds one direct token: an assertion command, a token
// exchange and a token request.
const directTimeout = assertionTimeout + 2*requestTimeout

// directToken gets a token without a person at a browser
// (client_credentials, jwt_bearer, id_jag), under the cross-process lock:
// a fresh token on disk other than the one served is taken as it is.
func (a *authenticator) directToken(ctx context.Context) (*tokenstore.Token, error) {
	ctx, cancel := context.WithTimeout(ctx, directTimeout)
	defer cancel()
	t, err := a.store.RefreshLocked(ctx, func(cur *tokenstore.Token) (*tokenstore.Token, error) {
		if cur != nil && !needsRefresh(cur, time.Now()) && cur.AccessToken != a.servedToken() {
			return cur, nil
		}
		d, err := a.discovery(ctx, nil, cur == nil)
		if err != nil {
			return nil, err
		}
		c, err := a.configuredClient(d)
		if err != nil {
			return nil, err
		}
		form := url.Values{}
		account := a.set.ClientID
		// source is what the workload or the person presented: a grant
		// refused for it is not asked again.
		var source string
		switch a.set.GrantType {
		case grantClientCreds:
			form.Set("grant_type", grantClientCreds)
		case grantJWTBearer, grantIDJAG:
			if source, err = a.set.Assertion.read(ctx); err != nil {
				return nil, sdk.NewError(sdk.CodeAuth, "server '%s', grant %s: %v", a.cfg.Server, a.set.GrantType, err)
			}
			if err := a.grants.check(source); err != nil {
				return nil, err
			}
			assertion := source
			if a.set.GrantType == grantIDJAG {
				if assertion, err = a.exchangeIDToken(ctx, d, source); err != nil {
					return nil, err
				}
				account = orDefault(accountOf(source), account)
			}
			form.Set("grant_type", jwtBearerGrantType)
			form.Set("assertion", assertion)
		default:
			return nil, sdk.NewError(sdk.CodeConfig, "server '%s': grant %s needs a login", a.cfg.Server, a.set.GrantType)
		}
		if s := a.scopeFor(d, ""); s != "" {
			form.Set("scope", s)
		}
		if d.resource != "" {
			form.Set("resource", d.resource)
		}
		p, err := a.tokenProver(d, dpopBound(cur))
		if err != nil {
			return nil, err
		}
		fresh, err := tokenRequest(ctx, a.hc, d.meta.TokenEndpoint, c, form, p)
		if err != nil {
			report := sdk.NewError(sdk.CodeAuth, "server '%s', grant %s at %s: %v", a.cfg.Server, a.set.GrantType, d.meta.Issuer, err)
			if source != "" && final(err) {
				a.grants.remember(source, report)
			}
			return nil, report
		}
		fresh.Issuer, fresh.Resource, fresh.Account = d.meta.Issuer, d.resource, account
		a.log.Debug("token obtained", "server", a.cfg.Server, "grant", a.set.GrantType)
		return fresh, nil
	})
	if err != nil {
		return nil, err
	}
	a.setToken(t)
	return t, nil
}

// exchangeIDToken exchanges the person's ID token at the enterprise IdP
// for an ID-JAG (RFC 8693) naming d's authorization server as audience
// and the MCP server as resource.
func (a *authenticator) exchangeIDToken(ctx context.Context, d *discovered, idToken string) (string, error) {
	g := a.set.grantSettings
	form := url.Values{
		"grant_type":           {tokenExchangeGrantType},
		"requested_token_type": {tokenTypeIDJAG},
		"subject_token":        {idToken},
		"subject_token_type":   {tokenTypeIDToken},
		"audience":             {d.meta.Issuer},
	}
	if d.resource != "" {
		form.Set("resource", d.resource)
	}
	if s := a.scopeFor(d, ""); s != "" {
		form.Set("scope", s)
	}
	c := client{ID: g.IdPClientID, Secret: g.IdPClientSecret, AuthMethod: discovery.AuthNone}
	if c.Secret != "" {
		c.AuthMethod = discovery.AuthClientSecretBasic
	}
	// The IdP's exchange is not DPoP-bound: the ID-JAG is a grant, not a
	// token presented to a resource.
	raw, _, err := postForm(ctx, a.hc, g.IdPTokenEndpoint, c, form, nil)
	if err != nil {
		report := sdk.NewError(sdk.CodeAuth, "server '%s', grant id_jag: the token exchange at the IdP %s: %v", a.cfg.Server, g.IdPTokenEndpoint, err)
		if final(err) {
			a.grants.remember(idToken, report)
		}
		return "", report
	}
	var tr struct {
		AccessToken     string `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
	}
	if err := json.Unmarshal(raw, &tr); err != nil || tr.AccessToken == "" {
		return "", sdk.NewError(sdk.CodeAuth, "server '%s', grant id_jag: the IdP %s answered the token exchange without a token", a.cfg.Server, g.IdPTokenEndpoint)
	}
	if tr.IssuedTokenType != "" && tr.IssuedTokenType != tokenTypeIDJAG {
		return "", sdk.NewError(sdk.CodeAuth, "server '%s', grant id_jag: the IdP %s issued a %s, not an ID-JAG", a.cfg.Server, g.IdPTokenEndpoint, shown(tr.IssuedTokenType, 80))
	}
	if !printable(tr.AccessToken) {
		return "", sdk.NewError(sdk.CodeAuth, "server '%s', grant id_jag: the IdP's ID-JAG holds characters a JWT cannot", a.cfg.Server)
	}
	return tr.AccessToken, nil
}

// directDetail says for status how a direct grant gets its tokens.
func directDetail(grant string) string {
	switch grant {
	case grantJWTBearer:
		return "workload identity (jwt_bearer; no login needed)"
	case grantIDJAG:
		return "enterprise-managed authorization (id_jag; no login needed)"
	}
	return "client credentials (no login needed)"
}
