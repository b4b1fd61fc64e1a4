package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
)

// Token endpoint authentication methods (RFC 7591 §2).
const (
	AuthNone              = "none"
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
)

// Grant types (RFC 7591 §2, RFC 8628 §7.2).
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
	GrantDeviceCode        = "urn:ietf:params:oauth:grant-type:device_code"
)

var (
	// ErrNoClient means there is no way to obtain a client ID for this
	// authorization server: nothing configured, no client ID metadata
	// document support, no registration endpoint.
	ErrNoClient = errors.New("no OAuth client available")
	// ErrRegistration means the registration endpoint refused or answered
	// nonsense.
	ErrRegistration = errors.New("dynamic client registration failed")
)

// ClientRequest is what Register asks for.
type ClientRequest struct {
	// ClientName is the human-readable name shown on consent screens.
	ClientName string
	// RedirectURIs are the callback URIs: loopback ones, or a host's own
	// callback (a gateway's) with ApplicationType "web".
	RedirectURIs []string
	// ApplicationType is OIDC's application_type: "native" (the default)
	// for a client on the person's machine, "web" for a host that receives
	// the redirect at a URL of its own.
	ApplicationType string
	// Scope is the scope the client will request, when known.
	Scope string
	// DeviceCode adds the device authorization grant type.
	DeviceCode bool
	// AuthMethod is the token endpoint authentication method to ask for;
	// empty means "none" when the server supports it or lists nothing, else
	// client_secret_basic or client_secret_post, whichever it lists.
	AuthMethod string
}

// ClientInfo is a registered client (RFC 7591 §3.2.1).
type ClientInfo struct {
	ClientID     string
	ClientSecret string
	// ClientIDIssuedAt and ClientSecretExpiresAt are seconds since the
	// epoch; ClientSecretExpiresAt 0 means the secret does not expire.
	ClientIDIssuedAt      int64
	ClientSecretExpiresAt int64
	// TokenEndpointAuthMethod is the method to use at the token endpoint:
	// the one registered, reconciled with what the server supports.
	TokenEndpointAuthMethod string
	// Issuer is the authorization server the client belongs to; a client
	// must never be used with another one (SEP-2352).
	Issuer string
	// Raw is the registration response as received, to persist.
	Raw json.RawMessage
}

// Register performs RFC 7591 dynamic client registration at
// meta.RegistrationEndpoint for a native public client (application_type
// "native", response_types ["code"], grant_types authorization_code and
// refresh_token, plus the device code grant when asked). Error answers are
// reported by status and their error and error_description fields, quoted
// and cut short; the body is never echoed.
func Register(ctx context.Context, client *http.Client, meta *ServerMetadata, req ClientRequest) (*ClientInfo, error) {
	if meta == nil || meta.RegistrationEndpoint == "" {
		return nil, fmt.Errorf("discovery: the authorization server offers no registration endpoint: %w", ErrRegistration)
	}
	endpoint := meta.RegistrationEndpoint
	if _, err := parseHTTPURL(endpoint); err != nil {
		return nil, fmt.Errorf("discovery: registration endpoint: %w", err)
	}
	method := req.AuthMethod
	if method == "" {
		method = registrationAuthMethod(meta.TokenEndpointAuthMethodsSupported)
	}
	grants := []string{GrantAuthorizationCode, GrantRefreshToken}
	if req.DeviceCode {
		grants = append(grants, GrantDeviceCode)
	}
	appType := req.ApplicationType
	if appType == "" {
		appType = "native"
	}
	body := map[string]any{
		"application_type":           appType,
		"client_name":                req.ClientName,
		"redirect_uris":              req.RedirectURIs,
		"grant_types":                grants,
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
	}
	if req.RedirectURIs == nil {
		body["redirect_uris"] = []string{}
	}
	if req.Scope != "" {
		body["scope"] = req.Scope
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("discovery: registration request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("discovery: registration at %s: %w", endpoint, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	resp, err := httpClient(client).Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("discovery: registration at %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := readBounded(resp.Body, "registration response", endpoint)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("discovery: registration at %s: HTTP %d%s: %w", endpoint, resp.StatusCode, oauthError(raw), ErrRegistration)
	}
	info, err := ParseClientInfo(raw)
	if err != nil {
		return nil, fmt.Errorf("%w (from %s)", err, endpoint)
	}
	info.Issuer = meta.Issuer
	info.TokenEndpointAuthMethod = SelectAuthMethod(meta.TokenEndpointAuthMethodsSupported, info.TokenEndpointAuthMethod, info.ClientSecret != "")
	return info, nil
}

// ParseClientInfo parses a registration response: client_id is required;
// client_id and client_secret must be printable ASCII (RFC 6749 Appendix
// A). Errors never show the secret.
func ParseClientInfo(data []byte) (*ClientInfo, error) {
	o, err := parseObject(data, "registration response")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrRegistration)
	}
	bad := func(err error) (*ClientInfo, error) {
		return nil, fmt.Errorf("discovery: registration response: %w: %w", err, ErrRegistration)
	}
	info := &ClientInfo{Raw: append(json.RawMessage(nil), data...)}
	if info.ClientID, err = o.str("client_id"); err != nil {
		return bad(err)
	}
	if info.ClientID == "" {
		return bad(errors.New("field client_id is missing"))
	}
	if !printableASCII(info.ClientID) {
		return bad(fmt.Errorf("field client_id %s has characters outside printable ASCII", quote(info.ClientID)))
	}
	if info.ClientSecret, err = o.str("client_secret"); err != nil {
		return bad(errors.New("field client_secret is not a string of acceptable length"))
	}
	if !printableASCII(info.ClientSecret) {
		return bad(errors.New("field client_secret has characters outside printable ASCII"))
	}
	if info.TokenEndpointAuthMethod, err = o.str("token_endpoint_auth_method"); err != nil {
		return bad(err)
	}
	info.ClientIDIssuedAt = o.integer("client_id_issued_at")
	info.ClientSecretExpiresAt = o.integer("client_secret_expires_at")
	return info, nil
}

// oauthError renders an OAuth error body's error and error_description
// fields, quoted and cut short, or nothing.
func oauthError(raw []byte) string {
	var e struct {
		Error       any `json:"error"`
		Description any `json:"error_description"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return ""
	}
	out := ""
	if s, ok := e.Error.(string); ok && s != "" {
		out += " " + quote(s)
	}
	if s, ok := e.Description.(string); ok && s != "" {
		out += ": " + quote(s)
	}
	return out
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// registrationAuthMethod is the method to register with when the caller
// did not choose: none (a public client using PKCE) unless the server
// lists methods without it.
func registrationAuthMethod(supported []string) string {
	switch {
	case len(supported) == 0 || slices.Contains(supported, AuthNone):
		return AuthNone
	case slices.Contains(supported, AuthClientSecretBasic):
		return AuthClientSecretBasic
	case slices.Contains(supported, AuthClientSecretPost):
		return AuthClientSecretPost
	}
	return AuthNone
}

// SelectAuthMethod picks the token endpoint authentication method for a
// client: registered (the method the client was registered with, if any)
// when the server lists it or lists nothing; otherwise, with a secret,
// client_secret_basic when the server lists it or lists nothing (the RFC
// 8414 default), else client_secret_post when listed; otherwise none.
func SelectAuthMethod(supported []string, registered string, hasSecret bool) string {
	known := registered == AuthNone || registered == AuthClientSecretBasic || registered == AuthClientSecretPost
	if known && (len(supported) == 0 || slices.Contains(supported, registered)) {
		if registered == AuthNone || hasSecret {
			return registered
		}
	}
	if hasSecret {
		switch {
		case len(supported) == 0 || slices.Contains(supported, AuthClientSecretBasic):
			return AuthClientSecretBasic
		case slices.Contains(supported, AuthClientSecretPost):
			return AuthClientSecretPost
		}
	}
	return AuthNone
}

// ClientConfig is the user's client configuration for one server.
type ClientConfig struct {
	// ClientID and ClientSecret are a pre-registered client (oauth.client_id,
	// oauth.client_secret).
	ClientID     string
	ClientSecret string
	// ClientMetadataURL is the URL of this client's client ID metadata
	// document: an https URL with a path.
	ClientMetadataURL string
}

// ClientKind says how the client identifies itself.
type ClientKind int

const (
	// ClientPreRegistered uses the configured client_id (and secret).
	ClientPreRegistered ClientKind = iota + 1
	// ClientMetadataDocument uses the client ID metadata document URL as
	// client_id, with no registration.
	ClientMetadataDocument
	// ClientDynamic registers with Register.
	ClientDynamic
)

// String names the kind.
func (k ClientKind) String() string {
	switch k {
	case ClientPreRegistered:
		return "pre-registered"
	case ClientMetadataDocument:
		return "client ID metadata document"
	case ClientDynamic:
		return "dynamic registration"
	}
	return fmt.Sprintf("ClientKind(%d)", int(k))
}

// ClientChoice is how to identify the client to one authorization server.
type ClientChoice struct {
	Kind ClientKind
	// ClientID and ClientSecret are set for ClientPreRegistered and
	// ClientMetadataDocument; Register supplies them for ClientDynamic.
	ClientID     string
	ClientSecret string
	// AuthMethod is the token endpoint authentication method (not set for
	// ClientDynamic, whose registration decides it).
	AuthMethod string
}

// ChooseClient decides how the client identifies itself to the
// authorization server described by meta, in the order of the MCP spec
// (2025-11-25, "Client Registration Approaches"): a configured client_id
// (pre-registered; auth method by SelectAuthMethod); else, when the server
// sets client_id_metadata_document_supported and a client metadata URL is
// configured, that URL as client_id (auth method none, no registration);
// else dynamic registration when the server has a registration endpoint;
// else an error wrapping ErrNoClient that tells the user to set
// oauth.client_id.
func ChooseClient(meta *ServerMetadata, cfg ClientConfig) (ClientChoice, error) {
	if meta == nil {
		return ClientChoice{}, fmt.Errorf("discovery: no authorization server metadata: %w", ErrNoClient)
	}
	if cfg.ClientID != "" {
		return ClientChoice{
			Kind:         ClientPreRegistered,
			ClientID:     cfg.ClientID,
			ClientSecret: cfg.ClientSecret,
			AuthMethod:   SelectAuthMethod(meta.TokenEndpointAuthMethodsSupported, "", cfg.ClientSecret != ""),
		}, nil
	}
	if meta.ClientIDMetadataDocumentSupported && cfg.ClientMetadataURL != "" {
		if err := ValidateClientMetadataURL(cfg.ClientMetadataURL); err != nil {
			return ClientChoice{}, err
		}
		return ClientChoice{Kind: ClientMetadataDocument, ClientID: cfg.ClientMetadataURL, AuthMethod: AuthNone}, nil
	}
	if meta.RegistrationEndpoint != "" {
		return ClientChoice{Kind: ClientDynamic}, nil
	}
	return ClientChoice{}, fmt.Errorf("discovery: authorization server %s supports neither dynamic client registration nor a client ID metadata document usable here; register a client with it and set oauth.client_id (and oauth.client_secret, if it issued one) for this server in config.yaml: %w",
		quote(meta.Issuer), ErrNoClient)
}

// ValidateClientMetadataURL checks a client ID metadata document URL: https,
// with a host and a path other than "/", no fragment.
func ValidateClientMetadataURL(s string) error {
	u, err := parseHTTPURL(s)
	if err == nil && (u.Scheme != "https" || u.Path == "" || u.Path == "/" || u.Fragment != "") {
		err = fmt.Errorf("%s must be an https URL with a path", quote(s))
	}
	if err != nil {
		return fmt.Errorf("discovery: client metadata URL: %w", err)
	}
	return nil
}
