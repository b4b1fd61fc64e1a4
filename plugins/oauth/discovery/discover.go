package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Result is what discovery found for one MCP server.
type Result struct {
	// ServerURL is the MCP server URL as given.
	ServerURL string
	// Resource is the RFC 8707 resource parameter to send: the protected
	// resource metadata's resource exactly as published, else the
	// canonical server URL (CanonicalResource).
	Resource string
	// Scope is the scope to request: the challenge's, else the protected
	// resource's scopes_supported joined by spaces, else "" (omit the
	// parameter).
	Scope string
	// Challenge is the Bearer challenge discovery started from, if any.
	Challenge BearerInfo
	// ResourceMetadata is nil when the server publishes none (the
	// 2025-03-26 fallback was used).
	ResourceMetadata *ResourceMetadata
	// AuthServer is the authorization server's metadata; with
	// DefaultEndpoints it is made up.
	AuthServer *ServerMetadata
	// Legacy is true when the 2025-03-26 discovery was used: no protected
	// resource metadata, the MCP server's origin acting as the
	// authorization server.
	Legacy bool
	// DefaultEndpoints is true when not even the origin had metadata and
	// AuthServer holds the 2025-03-26 default endpoints {origin}/authorize,
	// /token and /register.
	DefaultEndpoints bool
}

// Discover runs discovery for the MCP server at serverURL, starting from
// the WWW-Authenticate header values of its 401 answer, if any (none, or
// several header lines). It fetches the protected resource metadata
// (FetchResourceMetadata) and the metadata of its first authorization
// server (FetchServerMetadata). When the server publishes no protected
// resource metadata, or lists no authorization server, it falls back to
// the 2025-03-26 discovery: metadata at
// {origin}/.well-known/oauth-authorization-server, whose issuer must then
// share the MCP server's origin, else the default endpoints {origin}/authorize,
// /token and /register.
func Discover(ctx context.Context, client *http.Client, serverURL string, challengeHeaders ...string) (*Result, error) {
	canonical, err := CanonicalResource(serverURL)
	if err != nil {
		return nil, err
	}
	r := &Result{ServerURL: serverURL, Resource: canonical}
	r.Challenge, _ = BearerChallenge(challengeHeaders...)
	prm, err := FetchResourceMetadata(ctx, client, serverURL, r.Challenge.ResourceMetadata)
	switch {
	case err == nil:
		r.ResourceMetadata = prm
		r.Resource = prm.Resource
	case !errors.Is(err, ErrNoResourceMetadata):
		return nil, err
	}
	r.Scope = ChooseScope(r.Challenge.Scope, prm)
	if prm != nil && len(prm.AuthorizationServers) > 0 {
		r.AuthServer, err = FetchServerMetadata(ctx, client, prm.AuthorizationServers[0])
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	r.Legacy = true
	r.AuthServer, err = legacyServerMetadata(ctx, client, serverURL)
	switch {
	case err == nil:
	case errors.Is(err, ErrNoServerMetadata):
		r.DefaultEndpoints = true
		r.AuthServer = DefaultEndpoints(serverURL)
	default:
		return nil, err
	}
	return r, nil
}

// legacyServerMetadata is the 2025-03-26 discovery: the MCP server's
// origin is the authorization base URL. The issuer is allowed any path on
// that origin (the 0.1.16 conformance server publishes {origin}/oauth).
func legacyServerMetadata(ctx context.Context, client *http.Client, serverURL string) (*ServerMetadata, error) {
	s, err := parseHTTPURL(serverURL)
	if err != nil {
		return nil, fmt.Errorf("discovery: MCP server URL: %w", err)
	}
	o := origin(s)
	return fetchServerMetadata(ctx, client, o, []string{o + "/.well-known/oauth-authorization-server"}, func(got string) error {
		if u, err := parseIssuer(got); err == nil && origin(u) == o {
			return nil
		}
		return fmt.Errorf("discovery: authorization server metadata at the origin of %s names issuer %s on another origin: %w",
			serverURL, quote(got), ErrIssuerMismatch)
	})
}

// DefaultEndpoints returns the metadata the 2025-03-26 spec has a client
// assume when a server publishes none: {origin}/authorize, /token and
// /register, with the origin as issuer and PKCE S256. It returns nil for a
// URL that is not http(s).
func DefaultEndpoints(serverURL string) *ServerMetadata {
	s, err := parseHTTPURL(serverURL)
	if err != nil {
		return nil
	}
	o := origin(s)
	m := &ServerMetadata{
		Issuer:                        o,
		AuthorizationEndpoint:         o + "/authorize",
		TokenEndpoint:                 o + "/token",
		RegistrationEndpoint:          o + "/register",
		ResponseTypesSupported:        []string{"code"},
		GrantTypesSupported:           []string{"authorization_code", "refresh_token"},
		CodeChallengeMethodsSupported: []string{"S256"},
	}
	m.Raw, _ = json.Marshal(map[string]any{
		"issuer":                           m.Issuer,
		"authorization_endpoint":           m.AuthorizationEndpoint,
		"token_endpoint":                   m.TokenEndpoint,
		"registration_endpoint":            m.RegistrationEndpoint,
		"response_types_supported":         m.ResponseTypesSupported,
		"grant_types_supported":            m.GrantTypesSupported,
		"code_challenge_methods_supported": m.CodeChallengeMethodsSupported,
	})
	return m
}

// ChooseScope applies the MCP scope selection strategy: the challenge's
// scope, else the protected resource's scopes_supported joined by spaces,
// else "" (omit the scope parameter). Invalid scope tokens in the
// challenge are dropped.
func ChooseScope(challengeScope string, prm *ResourceMetadata) string {
	if s := UnionScopes(challengeScope); s != "" {
		return s
	}
	if prm != nil {
		return UnionScopes(prm.ScopesSupported...)
	}
	return ""
}

// StepUpScope reads a 403 answer's WWW-Authenticate header values for an
// insufficient_scope Bearer challenge and returns the scope to request on
// re-authorization: the union of current (the scope requested for the
// token in use) and the challenged scope, as the 2026-07-28 spec
// (SEP-2350) asks. ok is false when there is no such challenge or when it
// adds no scope to current, so re-authorizing would not help and the caller
// should give up rather than loop.
func StepUpScope(current string, headers ...string) (scope string, ok bool) {
	c, found := BearerChallenge(headers...)
	if !found || c.Error != "insufficient_scope" {
		return "", false
	}
	union := UnionScopes(current, c.Scope)
	have := map[string]bool{}
	for _, t := range strings.Fields(current) {
		have[t] = true
	}
	for _, t := range strings.Fields(union) {
		if !have[t] {
			return union, true
		}
	}
	return "", false
}

// UnionScopes joins space-separated scope lists into one, each valid scope
// token once, in first-seen order.
func UnionScopes(lists ...string) string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, t := range strings.Fields(l) {
			if validScopeToken(t) && !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return strings.Join(out, " ")
}
