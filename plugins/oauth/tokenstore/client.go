package tokenstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
)

// ClientKind says where an OAuth client came from.
type ClientKind string

// The kinds of client. A file the original Hermes wrote has no kind ("").
const (
	// KindDCR is a client registered dynamically (RFC 7591).
	KindDCR ClientKind = "dcr"
	// KindPreregistered is a client from the server's config (oauth.client_id);
	// it is never poisoned.
	KindPreregistered ClientKind = "preregistered"
	// KindCIMD is a Client ID Metadata Document: the client_id is a URL.
	KindCIMD ClientKind = "cimd"
)

// Client is the content of <stem>.client.json: the OAuth client Hermes uses
// with the server's authorization server. It prints and logs without its
// secret.
type Client struct {
	ClientID                string   // client_id; a stored client always has one
	ClientSecret            string   // client_secret, "" for a public client
	ClientSecretExpiresAt   int64    // client_secret_expires_at, Unix seconds; 0: never
	ClientIDIssuedAt        int64    // client_id_issued_at, Unix seconds; 0: unknown
	TokenEndpointAuthMethod string   // token_endpoint_auth_method: "none", "client_secret_post", ...
	RedirectURIs            []string // redirect_uris

	// RegisteredFor is the issuer of the authorization server the client
	// was registered with: after the server moves to another authorization
	// server, a client of the old one is not reused. "" when unknown.
	RegisteredFor string
	Kind          ClientKind

	// Extra holds the file's fields this package does not know (the rest
	// of a registration response: client_name, grant_types, scope, ...);
	// SaveClient writes them back unchanged.
	Extra map[string]json.RawMessage
}

var clientKeys = []string{
	"client_id", "client_secret", "client_secret_expires_at", "client_id_issued_at",
	"token_endpoint_auth_method", "redirect_uris", "registered_for", "kind",
}

// decodeClient reads a client file's bytes.
func decodeClient(data []byte) (*Client, string) {
	o, problem := parseObject(data)
	if problem != "" {
		return nil, problem
	}
	c := &Client{
		ClientID:                o.str("client_id"),
		ClientSecret:            o.str("client_secret"),
		ClientSecretExpiresAt:   o.num("client_secret_expires_at"),
		ClientIDIssuedAt:        o.num("client_id_issued_at"),
		TokenEndpointAuthMethod: o.str("token_endpoint_auth_method"),
		RedirectURIs:            o.strs("redirect_uris"),
		RegisteredFor:           o.str("registered_for"),
		Kind:                    ClientKind(o.str("kind")),
	}
	if o.err != "" {
		return nil, o.err
	}
	if c.ClientID == "" {
		return nil, `no "client_id"`
	}
	c.Extra = o.rest()
	return c, ""
}

func (c *Client) encode() ([]byte, error) {
	w := newWriter(c.Extra, clientKeys...)
	w.str("client_id", c.ClientID)
	w.str("client_secret", c.ClientSecret)
	w.num("client_secret_expires_at", c.ClientSecretExpiresAt)
	w.num("client_id_issued_at", c.ClientIDIssuedAt)
	w.str("token_endpoint_auth_method", c.TokenEndpointAuthMethod)
	w.strs("redirect_uris", c.RedirectURIs)
	w.str("registered_for", c.RegisteredFor)
	w.str("kind", string(c.Kind))
	return w.bytes()
}

// MarshalJSON writes c in the client file's format (with its secret).
func (c Client) MarshalJSON() ([]byte, error) {
	b, err := c.encode()
	if err != nil {
		return nil, fmt.Errorf("tokenstore: client: %w", err)
	}
	return b, nil
}

// UnmarshalJSON reads the client file's format; its errors wrap
// ErrCorrupt and never quote the input.
func (c *Client) UnmarshalJSON(data []byte) error {
	d, problem := decodeClient(data)
	if problem != "" {
		return fmt.Errorf("tokenstore: client: %w: %s", ErrCorrupt, problem)
	}
	*c = *d
	return nil
}

// SecretExpired reports whether the client's secret has expired at now
// (RFC 7591 client_secret_expires_at; 0 never expires).
func (c *Client) SecretExpired(now time.Time) bool {
	return c != nil && c.ClientSecret != "" && c.ClientSecretExpiresAt != 0 &&
		!now.Before(time.Unix(c.ClientSecretExpiresAt, 0))
}

// String describes c without its secret.
func (c Client) String() string {
	return fmt.Sprintf("Client{id=%q kind=%q secret=%t auth_method=%q registered_for=%q}",
		c.ClientID, c.Kind, c.ClientSecret != "", c.TokenEndpointAuthMethod, c.RegisteredFor)
}

// GoString is String, so %#v does not print the secret either.
func (c Client) GoString() string { return "tokenstore." + c.String() }

// LogValue logs c without its secret.
func (c Client) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("client_id", c.ClientID),
		slog.String("kind", string(c.Kind)),
		slog.Bool("client_secret", c.ClientSecret != ""),
		slog.String("auth_method", c.TokenEndpointAuthMethod),
		slog.String("registered_for", c.RegisteredFor),
	)
}

// Meta is the content of <stem>.meta.json: the discovery result, kept so
// a cold start can refresh without discovering again. The authorization
// server's metadata is kept as the server sent it; this package does not
// interpret it.
type Meta struct {
	Issuer              string          // issuer: the authorization server's issuer
	Resource            string          // resource: the protected resource (RFC 9728 / RFC 8707)
	ResourceMetadataURL string          // resource_metadata_url: where the protected resource metadata was found
	Scope               string          // scope: the scope to request
	AuthServer          json.RawMessage // authorization_server: the AS metadata document (a JSON object)

	// Extra holds the file's fields this package does not know; SaveMeta
	// writes them back unchanged.
	Extra map[string]json.RawMessage
}

var metaKeys = []string{"issuer", "resource", "resource_metadata_url", "scope", "authorization_server"}

// decodeMeta reads a meta file's bytes. The original stored the
// authorization server's metadata document itself; such a file (it has a
// token_endpoint or authorization_endpoint and no authorization_server)
// reads as that document and its issuer.
func decodeMeta(data []byte) (*Meta, string) {
	o, problem := parseObject(data)
	if problem != "" {
		return nil, problem
	}
	_, hasAS := o.fields["authorization_server"]
	_, hasToken := o.fields["token_endpoint"]
	_, hasAuthz := o.fields["authorization_endpoint"]
	if !hasAS && (hasToken || hasAuthz) {
		issuer := o.str("issuer")
		if o.err != "" {
			return nil, o.err
		}
		var doc bytes.Buffer
		if json.Compact(&doc, bytes.TrimPrefix(data, utf8BOM)) != nil {
			return nil, "not valid JSON"
		}
		return &Meta{Issuer: issuer, AuthServer: doc.Bytes()}, ""
	}
	m := &Meta{
		Issuer:              o.str("issuer"),
		Resource:            o.str("resource"),
		ResourceMetadataURL: o.str("resource_metadata_url"),
		Scope:               o.str("scope"),
		AuthServer:          o.obj("authorization_server"),
	}
	if o.err != "" {
		return nil, o.err
	}
	m.Extra = o.rest()
	return m, ""
}

func (m *Meta) encode() ([]byte, error) {
	if len(m.AuthServer) > 0 && !isObject(m.AuthServer) {
		return nil, fmt.Errorf("AuthServer is not a JSON object")
	}
	w := newWriter(m.Extra, metaKeys...)
	w.str("issuer", m.Issuer)
	w.str("resource", m.Resource)
	w.str("resource_metadata_url", m.ResourceMetadataURL)
	w.str("scope", m.Scope)
	w.raw("authorization_server", m.AuthServer)
	return w.bytes()
}

// MarshalJSON writes m in the meta file's format.
func (m Meta) MarshalJSON() ([]byte, error) {
	b, err := m.encode()
	if err != nil {
		return nil, fmt.Errorf("tokenstore: meta: %w", err)
	}
	return b, nil
}

// UnmarshalJSON reads the meta file's format (or the original's); its
// errors wrap ErrCorrupt.
func (m *Meta) UnmarshalJSON(data []byte) error {
	d, problem := decodeMeta(data)
	if problem != "" {
		return fmt.Errorf("tokenstore: meta: %w: %s", ErrCorrupt, problem)
	}
	*m = *d
	return nil
}
