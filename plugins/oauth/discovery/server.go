package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

var (
	// ErrNoServerMetadata means that none of the well-known places of an
	// issuer serves authorization server metadata.
	ErrNoServerMetadata = errors.New("no authorization server metadata")
	// ErrIssuerMismatch means that a metadata document, or the iss
	// parameter of an authorization response, names another issuer than
	// the one expected. The flow must stop.
	ErrIssuerMismatch = errors.New("issuer mismatch")
	// ErrPKCEUnsupported means that the authorization server does not
	// advertise PKCE with S256. The MCP spec requires the client to refuse
	// to proceed.
	ErrPKCEUnsupported = errors.New("authorization server does not advertise PKCE S256")
)

// ServerMetadata is an authorization server's metadata document (RFC 8414,
// OpenID Connect Discovery 1.0), checked.
type ServerMetadata struct {
	Issuer                string
	AuthorizationEndpoint string
	TokenEndpoint         string
	RegistrationEndpoint  string
	RevocationEndpoint    string
	// IntrospectionEndpoint is RFC 7662's introspection_endpoint: what
	// auth-status asks whether a refresh token is still active.
	IntrospectionEndpoint                      string
	DeviceAuthorizationEndpoint                string
	ScopesSupported                            []string
	ResponseTypesSupported                     []string
	GrantTypesSupported                        []string
	CodeChallengeMethodsSupported              []string
	TokenEndpointAuthMethodsSupported          []string
	ClientIDMetadataDocumentSupported          bool
	AuthorizationResponseIssParameterSupported bool
	// DPoPSigningAlgValuesSupported is RFC 9449 §5.1's
	// dpop_signing_alg_values_supported: the proof algorithms the server
	// takes; empty, it offers no DPoP.
	DPoPSigningAlgValuesSupported []string
	// URL is where the document was found (empty when parsed from bytes or
	// made up from default endpoints).
	URL string
	// Raw is the document as received (or as made up), to persist and to
	// read back with ParseServerMetadata.
	Raw json.RawMessage
}

// ParseServerMetadata parses and checks an authorization server metadata
// document: issuer must be an http(s) URL without query or fragment, every
// endpoint an http(s) URL without a fragment, token_endpoint present, and
// authorization_endpoint or device_authorization_endpoint present. It does
// not compare the issuer with the one asked for, nor check PKCE support;
// FetchServerMetadata does both.
func ParseServerMetadata(data []byte) (*ServerMetadata, error) {
	o, err := parseObject(data, "authorization server metadata")
	if err != nil {
		return nil, err
	}
	bad := func(err error) (*ServerMetadata, error) {
		return nil, fmt.Errorf("discovery: authorization server metadata: %w", err)
	}
	m := &ServerMetadata{Raw: append(json.RawMessage(nil), data...)}
	if m.Issuer, err = o.str("issuer"); err != nil {
		return bad(err)
	}
	if m.Issuer == "" {
		return bad(errors.New("field issuer is missing"))
	}
	if _, err := parseIssuer(m.Issuer); err != nil {
		return bad(fmt.Errorf("field issuer: %w", err))
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{"authorization_endpoint", &m.AuthorizationEndpoint},
		{"token_endpoint", &m.TokenEndpoint},
		{"registration_endpoint", &m.RegistrationEndpoint},
		{"revocation_endpoint", &m.RevocationEndpoint},
		{"introspection_endpoint", &m.IntrospectionEndpoint},
		{"device_authorization_endpoint", &m.DeviceAuthorizationEndpoint},
	} {
		if *f.dst, err = o.httpURLField(f.name); err != nil {
			return bad(err)
		}
	}
	if m.TokenEndpoint == "" {
		return bad(errors.New("field token_endpoint is missing"))
	}
	if m.AuthorizationEndpoint == "" && m.DeviceAuthorizationEndpoint == "" {
		return bad(errors.New("fields authorization_endpoint and device_authorization_endpoint are both missing"))
	}
	for _, f := range []struct {
		name string
		dst  *[]string
	}{
		{"scopes_supported", &m.ScopesSupported},
		{"response_types_supported", &m.ResponseTypesSupported},
		{"grant_types_supported", &m.GrantTypesSupported},
		{"code_challenge_methods_supported", &m.CodeChallengeMethodsSupported},
		{"token_endpoint_auth_methods_supported", &m.TokenEndpointAuthMethodsSupported},
		{"dpop_signing_alg_values_supported", &m.DPoPSigningAlgValuesSupported},
	} {
		if *f.dst, err = o.strs(f.name); err != nil {
			return bad(err)
		}
	}
	m.ClientIDMetadataDocumentSupported = o.boolean("client_id_metadata_document_supported")
	m.AuthorizationResponseIssParameterSupported = o.boolean("authorization_response_iss_parameter_supported")
	return m, nil
}

// CheckPKCE returns an error wrapping ErrPKCEUnsupported unless
// code_challenge_methods_supported lists S256. The MCP spec (2025-11-25)
// reads an absent field as "no PKCE" and requires the client to refuse.
func (m *ServerMetadata) CheckPKCE() error {
	if slices.Contains(m.CodeChallengeMethodsSupported, "S256") {
		return nil
	}
	if m.CodeChallengeMethodsSupported == nil {
		return fmt.Errorf("discovery: authorization server %s does not list code_challenge_methods_supported, so it may not support PKCE; the MCP spec requires refusing it: %w",
			quote(m.Issuer), ErrPKCEUnsupported)
	}
	return fmt.Errorf("discovery: authorization server %s lists code_challenge_methods_supported %s without S256; the MCP spec requires refusing it: %w",
		quote(m.Issuer), quote(strings.Join(m.CodeChallengeMethodsSupported, " ")), ErrPKCEUnsupported)
}

// ServerMetadataURLs lists where authorization server metadata for issuer
// is looked for, in order. With a path:
// {origin}/.well-known/oauth-authorization-server{path},
// {origin}/.well-known/openid-configuration{path},
// {issuer}/.well-known/openid-configuration; without:
// {origin}/.well-known/oauth-authorization-server,
// {origin}/.well-known/openid-configuration. There is no root fallback for
// an issuer with a path.
func ServerMetadataURLs(issuer string) ([]string, error) {
	u, err := parseIssuer(issuer)
	if err != nil {
		return nil, fmt.Errorf("discovery: issuer: %w", err)
	}
	o := origin(u)
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if path == "" {
		return []string{
			o + "/.well-known/oauth-authorization-server",
			o + "/.well-known/openid-configuration",
		}, nil
	}
	return []string{
		o + "/.well-known/oauth-authorization-server" + path,
		o + "/.well-known/openid-configuration" + path,
		o + path + "/.well-known/openid-configuration",
	}, nil
}

// FetchServerMetadata fetches the metadata of the authorization server
// issuer from the places ServerMetadataURLs lists, skipping those that
// answer 4xx, 502 or an HTML page. The document's issuer must equal issuer
// (RFC 8414 §3.3; a single trailing slash aside, since both spellings give
// the same well-known URLs), else the error wraps ErrIssuerMismatch, and it
// must advertise PKCE S256 (CheckPKCE). When no place has a document the
// error wraps ErrNoServerMetadata.
func FetchServerMetadata(ctx context.Context, client *http.Client, issuer string) (*ServerMetadata, error) {
	urls, err := ServerMetadataURLs(issuer)
	if err != nil {
		return nil, err
	}
	return fetchServerMetadata(ctx, client, issuer, urls, func(got string) error {
		if got == issuer || strings.TrimSuffix(got, "/") == strings.TrimSuffix(issuer, "/") {
			return nil
		}
		return fmt.Errorf("discovery: authorization server metadata for issuer %s names issuer %s: %w", issuer, quote(got), ErrIssuerMismatch)
	})
}

// fetchServerMetadata tries urls in order; checkIssuer judges the
// document's issuer.
func fetchServerMetadata(ctx context.Context, client *http.Client, issuer string, urls []string, checkIssuer func(string) error) (*ServerMetadata, error) {
	var tried []string
	for _, u := range urls {
		res, err := fetchJSON(ctx, client, u, "authorization server metadata")
		if err != nil {
			return nil, err
		}
		if res.miss {
			tried = append(tried, fmt.Sprintf("%s: %s", u, missReason(res)))
			continue
		}
		m, err := ParseServerMetadata(res.body)
		if err != nil {
			return nil, fmt.Errorf("%w (from %s)", err, u)
		}
		m.URL = u
		if err := checkIssuer(m.Issuer); err != nil {
			return nil, fmt.Errorf("%w (from %s)", err, u)
		}
		if err := m.CheckPKCE(); err != nil {
			return nil, fmt.Errorf("%w (from %s)", err, u)
		}
		return m, nil
	}
	return nil, fmt.Errorf("discovery: issuer %s: tried %s: %w", issuer, strings.Join(tried, ", "), ErrNoServerMetadata)
}

// parseIssuer checks an issuer identifier: an http(s) URL with a host and
// no query or fragment (RFC 8414 §2).
func parseIssuer(s string) (*url.URL, error) {
	u, err := parseHTTPURL(s)
	if err != nil {
		return nil, err
	}
	if strings.ContainsAny(s, "?#") {
		return nil, fmt.Errorf("%s has a query or fragment", quote(s))
	}
	return u, nil
}

// ValidateIssuerParam checks the iss parameter of an authorization
// response (RFC 9207) against the issuer recorded in meta; present tells
// whether the response carried iss at all. When the server advertises
// authorization_response_iss_parameter_supported, iss must be present.
// When iss is present it must equal meta.Issuer by simple string
// comparison, advertised or not: no case folding, default-port elision,
// trailing-slash or percent-encoding normalisation. With no recorded
// issuer (meta nil or without one) there is nothing to compare and it
// returns nil. Errors wrap ErrIssuerMismatch.
func ValidateIssuerParam(meta *ServerMetadata, iss string, present bool) error {
	if meta == nil || meta.Issuer == "" {
		return nil
	}
	if !present {
		if meta.AuthorizationResponseIssParameterSupported {
			return fmt.Errorf("discovery: the authorization response has no iss parameter although authorization server %s advertises it (RFC 9207): %w",
				quote(meta.Issuer), ErrIssuerMismatch)
		}
		return nil
	}
	if iss != meta.Issuer {
		return fmt.Errorf("discovery: the authorization response's iss %s is not the authorization server's issuer %s (RFC 9207): %w",
			quote(iss), quote(meta.Issuer), ErrIssuerMismatch)
	}
	return nil
}
