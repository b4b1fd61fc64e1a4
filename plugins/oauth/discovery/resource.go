package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

var (
	// ErrNoResourceMetadata means that none of the places tried serves
	// protected resource metadata (each answered 4xx, 502 or an HTML
	// page): the server predates RFC 9728 and the caller may fall back to
	// the 2025-03-26 discovery.
	ErrNoResourceMetadata = errors.New("no protected resource metadata")
	// ErrResourceMismatch means that protected resource metadata names a
	// resource that does not cover the MCP server URL. The flow must stop.
	ErrResourceMismatch = errors.New("protected resource metadata is for another resource")
)

// ResourceMetadata is an OAuth 2.0 Protected Resource Metadata document
// (RFC 9728), checked.
type ResourceMetadata struct {
	// Resource is the resource identifier exactly as published: the value
	// to send as the RFC 8707 resource parameter.
	Resource string
	// AuthorizationServers lists issuer identifiers, in the server's order.
	AuthorizationServers []string
	// ScopesSupported lists the scopes the resource understands.
	ScopesSupported []string
	// DPoPBoundAccessTokensRequired is RFC 9449 §5.2's
	// dpop_bound_access_tokens_required: the resource takes DPoP-bound
	// tokens only.
	DPoPBoundAccessTokensRequired bool
	// URL is where the document was found (empty when parsed from bytes).
	URL string
	// Raw is the document as received.
	Raw json.RawMessage
}

// ParseResourceMetadata parses and checks a protected resource metadata
// document: resource must be an http(s) URL without a fragment, each
// authorization server a valid issuer identifier, each scope a valid scope
// token. It does not check that the resource matches a server URL; see
// CheckResource.
func ParseResourceMetadata(data []byte) (*ResourceMetadata, error) {
	o, err := parseObject(data, "protected resource metadata")
	if err != nil {
		return nil, err
	}
	bad := func(err error) (*ResourceMetadata, error) {
		return nil, fmt.Errorf("discovery: protected resource metadata: %w", err)
	}
	m := &ResourceMetadata{Raw: append(json.RawMessage(nil), data...)}
	if m.Resource, err = o.httpURLField("resource"); err != nil {
		return bad(err)
	}
	if m.Resource == "" {
		return bad(errors.New("field resource is missing"))
	}
	if m.AuthorizationServers, err = o.strs("authorization_servers"); err != nil {
		return bad(err)
	}
	for _, s := range m.AuthorizationServers {
		if _, err := parseIssuer(s); err != nil {
			return bad(fmt.Errorf("field authorization_servers: %w", err))
		}
	}
	if m.ScopesSupported, err = o.strs("scopes_supported"); err != nil {
		return bad(err)
	}
	for _, s := range m.ScopesSupported {
		if !validScopeToken(s) {
			return bad(fmt.Errorf("field scopes_supported: %s is not a valid scope", quote(s)))
		}
	}
	m.DPoPBoundAccessTokensRequired = o.boolean("dpop_bound_access_tokens_required")
	return m, nil
}

// FetchResourceMetadata finds the protected resource metadata of the MCP
// server at serverURL. It tries, in order: fromChallenge (the
// resource_metadata URL of a WWW-Authenticate challenge, used as given, any
// origin, when not empty), then the path-inserted
// {origin}/.well-known/oauth-protected-resource{path}, then the root
// {origin}/.well-known/oauth-protected-resource. A place that answers 4xx,
// 502 or an HTML page is skipped; any other failure stops the search. The
// first document found must name a resource covering serverURL (see
// CheckResource), else the error wraps ErrResourceMismatch. When no place
// has a document the error wraps ErrNoResourceMetadata.
func FetchResourceMetadata(ctx context.Context, client *http.Client, serverURL string, fromChallenge string) (*ResourceMetadata, error) {
	server, err := parseHTTPURL(serverURL)
	if err != nil {
		return nil, fmt.Errorf("discovery: MCP server URL: %w", err)
	}
	var tried []string
	for _, u := range resourceMetadataURLs(server, fromChallenge) {
		res, err := fetchJSON(ctx, client, u, "protected resource metadata")
		if err != nil {
			return nil, err
		}
		if res.miss {
			tried = append(tried, fmt.Sprintf("%s: %s", u, missReason(res)))
			continue
		}
		m, err := ParseResourceMetadata(res.body)
		if err != nil {
			return nil, fmt.Errorf("%w (from %s)", err, u)
		}
		m.URL = u
		if err := CheckResource(serverURL, m.Resource); err != nil {
			return nil, fmt.Errorf("%w (from %s)", err, u)
		}
		return m, nil
	}
	return nil, fmt.Errorf("discovery: %s: tried %s: %w", serverURL, strings.Join(tried, ", "), ErrNoResourceMetadata)
}

func missReason(r fetchResult) string {
	if r.status >= 200 && r.status <= 299 {
		return "HTML page"
	}
	return fmt.Sprintf("HTTP %d", r.status)
}

// resourceMetadataURLs lists the places to look, without repeats.
func resourceMetadataURLs(server *url.URL, fromChallenge string) []string {
	var out []string
	add := func(u string) {
		for _, o := range out {
			if o == u {
				return
			}
		}
		out = append(out, u)
	}
	if fromChallenge != "" {
		add(fromChallenge)
	}
	const wk = "/.well-known/oauth-protected-resource"
	if path := strings.TrimSuffix(server.EscapedPath(), "/"); path != "" {
		u := origin(server) + wk + path
		if server.RawQuery != "" {
			u += "?" + server.RawQuery
		}
		add(u)
	}
	add(origin(server) + wk)
	return out
}

// CheckResource reports whether the resource named by protected resource
// metadata covers the MCP server URL: the same origin, and the resource's
// path a prefix of the server's path by whole segments, a trailing slash
// on either side not counting. A mismatch wraps ErrResourceMismatch and
// names both URLs.
func CheckResource(serverURL, resource string) error {
	s, err := parseHTTPURL(serverURL)
	if err != nil {
		return fmt.Errorf("discovery: MCP server URL: %w", err)
	}
	mismatch := fmt.Errorf("discovery: protected resource metadata names resource %s, which does not cover the MCP server URL %s: %w",
		quote(resource), serverURL, ErrResourceMismatch)
	r, err := parseHTTPURL(resource)
	if err != nil || origin(r) != origin(s) {
		return mismatch
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	sp := strings.TrimSuffix(s.EscapedPath(), "/")
	if sp != rp && !strings.HasPrefix(sp, rp+"/") {
		return mismatch
	}
	return nil
}

// CanonicalResource returns the canonical form of an MCP server URL used
// as the RFC 8707 resource when the server publishes no protected resource
// metadata: scheme and host lower-cased, default port and fragment
// dropped, path and query kept as they are.
func CanonicalResource(serverURL string) (string, error) {
	u, err := parseHTTPURL(serverURL)
	if err != nil {
		return "", fmt.Errorf("discovery: MCP server URL: %w", err)
	}
	out := origin(u) + u.EscapedPath()
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	return out, nil
}
