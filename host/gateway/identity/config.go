package identity

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Config is the identity part of the gateway's block (SPEC §11, gateway:).
// The yaml tags name the keys; errors from New name them too, under
// "gateway.". Zero values take the documented defaults.
type Config struct {
	// Resource is this gateway's resource URI (RFC 8707): the audience
	// tokens must carry unless an issuer names another, and RFC 9728's
	// "resource". https, or http on a loopback host; no fragment or query.
	Resource string `yaml:"resource"`
	// ScopesSupported is published in the resource metadata
	// (scopes_supported); optional.
	ScopesSupported []string `yaml:"scopes_supported"`
	// Issuers are the accepted token issuers (OAuth 2.1 authorization
	// servers).
	Issuers []IssuerConfig `yaml:"issuers"`
	// Tokens are the static bearer tokens, by their sha256.
	Tokens []StaticToken `yaml:"tokens"`
	// ClockSkew is the leeway on exp, nbf and iat (default 60 s, at most
	// 5 min).
	ClockSkew time.Duration `yaml:"clock_skew"`
	// MaxTokenBytes bounds a presented token (default 16 KiB): a longer one
	// is refused before it is parsed or hashed.
	MaxTokenBytes int `yaml:"max_token_bytes"`
	// FetchTimeout bounds each fetch of metadata or keys and each
	// introspection request (default 10 s).
	FetchTimeout time.Duration `yaml:"fetch_timeout"`
	// MaxFetchBytes bounds each fetched document or introspection answer
	// (default 256 KiB).
	MaxFetchBytes int `yaml:"max_fetch_bytes"`
	// TokenCacheTTL is how long a verified JWT's Principal is reused for
	// the same token (default 60 s; never past its exp): a client sends
	// the same token with every request, and checking a signature costs
	// 0.1-0.5 ms.
	TokenCacheTTL time.Duration `yaml:"token_cache_ttl"`
	// TokenCacheSize bounds the verified JWTs kept (default 4096; -1
	// keeps none).
	TokenCacheSize int `yaml:"token_cache_size"`
}

// IssuerConfig is one accepted issuer (gateway.issuers[i]).
type IssuerConfig struct {
	// Issuer is the issuer identifier, matched exactly against a token's
	// iss (and against the iss of its discovery metadata).
	Issuer string `yaml:"issuer"`
	// Audience is the aud a token must contain; default: the gateway's
	// resource URI. Name another only for an IdP that cannot put the
	// resource URI in aud (e.g. Entra's api://<app id>).
	Audience string `yaml:"audience"`
	// GroupsClaim names the claim holding the person's groups (an array of
	// strings, or one string). A name is looked up as it is first, then as
	// a dotted path into objects (realm_access.roles). Empty: no groups.
	GroupsClaim string `yaml:"groups_claim"`
	// ScopesClaim names the claim holding the scopes (a space-separated
	// string or an array); default "scope", then "scp".
	ScopesClaim string `yaml:"scopes_claim"`
	// Algorithms are the accepted signature algorithms (default RS256,
	// ES256, EdDSA). "none" and the HMACs are refused: a resource server
	// holds no shared secret with an issuer.
	Algorithms []string `yaml:"algorithms"`
	// JWKSURI skips discovery when set.
	JWKSURI string `yaml:"jwks_uri"`
	// JWKSRefetchInterval is the least time between two fetches of the
	// issuer's keys (the bound on refetching for an unknown key id; default
	// 30 s).
	JWKSRefetchInterval time.Duration `yaml:"jwks_refetch_interval"`
	// JWKSMaxAge is how long fetched keys are used before they are fetched
	// again (default 1 h), so a key the issuer withdrew stops verifying.
	JWKSMaxAge time.Duration `yaml:"jwks_max_age"`
	// Introspection, when set, validates this issuer's tokens (and opaque
	// tokens) through its RFC 7662 endpoint instead of locally.
	Introspection *IntrospectionConfig `yaml:"introspection"`
}

// IntrospectionConfig is an issuer's RFC 7662 endpoint
// (gateway.issuers[i].introspection).
type IntrospectionConfig struct {
	// Endpoint is the introspection endpoint's URL.
	Endpoint string `yaml:"endpoint"`
	// ClientIDEnv and ClientSecretEnv name the environment variables
	// holding the gateway's client credentials at the issuer (sent with
	// HTTP Basic authentication).
	ClientIDEnv     string `yaml:"client_id_env"`
	ClientSecretEnv string `yaml:"client_secret_env"`
	// CacheTTL is how long a positive answer is reused (default 30 s; never
	// past the token's exp).
	CacheTTL time.Duration `yaml:"cache_ttl"`
	// CacheSize bounds the answers kept (default 1024).
	CacheSize int `yaml:"cache_size"`
}

// StaticToken is one static bearer token (gateway.tokens[i]).
type StaticToken struct {
	// Subject is the person the token stands for.
	Subject string `yaml:"subject"`
	// SHA256 is the hex sha256 of the token; the token itself is never
	// configured.
	SHA256 string `yaml:"sha256"`
	// Groups and Scopes are the person's groups and granted scopes.
	Groups []string `yaml:"groups"`
	Scopes []string `yaml:"scopes"`
}

// Defaults of the Config's zero values.
const (
	DefaultClockSkew           = 60 * time.Second
	MaxClockSkew               = 5 * time.Minute
	DefaultMaxTokenBytes       = 16 << 10
	DefaultFetchTimeout        = 10 * time.Second
	DefaultMaxFetchBytes       = 256 << 10
	DefaultJWKSRefetchInterval = 30 * time.Second
	DefaultJWKSMaxAge          = time.Hour
	DefaultTokenCacheTTL       = 60 * time.Second
	DefaultTokenCacheSize      = 4096
	DefaultIntrospectionTTL    = 30 * time.Second
	DefaultIntrospectionCache  = 1024
	// maxKeys bounds the keys kept of one JWKS.
	maxKeys = 100
)

// DefaultAlgorithms are the signature algorithms accepted when an issuer
// names none.
var DefaultAlgorithms = []string{"RS256", "ES256", "EdDSA"}

// signatureAlgorithms are the asymmetric JWS algorithms an issuer may be
// configured with.
var signatureAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// withDefaults returns c with its zero values filled in.
func (c Config) withDefaults() Config {
	if c.ClockSkew == 0 {
		c.ClockSkew = DefaultClockSkew
	}
	if c.MaxTokenBytes == 0 {
		c.MaxTokenBytes = DefaultMaxTokenBytes
	}
	if c.FetchTimeout == 0 {
		c.FetchTimeout = DefaultFetchTimeout
	}
	if c.MaxFetchBytes == 0 {
		c.MaxFetchBytes = DefaultMaxFetchBytes
	}
	if c.TokenCacheTTL == 0 {
		c.TokenCacheTTL = DefaultTokenCacheTTL
	}
	if c.TokenCacheSize == 0 {
		c.TokenCacheSize = DefaultTokenCacheSize
	}
	c.Issuers = slices.Clone(c.Issuers)
	for i := range c.Issuers {
		is := &c.Issuers[i]
		if is.Audience == "" {
			is.Audience = c.Resource
		}
		if len(is.Algorithms) == 0 {
			is.Algorithms = DefaultAlgorithms
		}
		if is.JWKSRefetchInterval == 0 {
			is.JWKSRefetchInterval = DefaultJWKSRefetchInterval
		}
		if is.JWKSMaxAge == 0 {
			is.JWKSMaxAge = DefaultJWKSMaxAge
		}
		if is.Introspection != nil {
			in := *is.Introspection
			if in.CacheTTL == 0 {
				in.CacheTTL = DefaultIntrospectionTTL
			}
			if in.CacheSize == 0 {
				in.CacheSize = DefaultIntrospectionCache
			}
			is.Introspection = &in
		}
	}
	return c
}

// validate checks a Config with its defaults filled in; each error names
// its key.
func (c Config) validate() error {
	if err := checkURL(c.Resource, true); err != nil {
		return fmt.Errorf("gateway.resource: %w", err)
	}
	if c.ClockSkew < 0 || c.ClockSkew > MaxClockSkew {
		return fmt.Errorf("gateway.clock_skew: %s is not between 0 and %s", c.ClockSkew, MaxClockSkew)
	}
	if c.MaxTokenBytes < 0 {
		return fmt.Errorf("gateway.max_token_bytes: %d is negative", c.MaxTokenBytes)
	}
	if c.FetchTimeout < 0 {
		return fmt.Errorf("gateway.fetch_timeout: %s is negative", c.FetchTimeout)
	}
	if c.MaxFetchBytes < 0 {
		return fmt.Errorf("gateway.max_fetch_bytes: %d is negative", c.MaxFetchBytes)
	}
	if c.TokenCacheTTL < 0 {
		return fmt.Errorf("gateway.token_cache_ttl: %s is negative", c.TokenCacheTTL)
	}
	if c.TokenCacheSize < -1 {
		return fmt.Errorf("gateway.token_cache_size: %d is below -1 (none kept)", c.TokenCacheSize)
	}
	if len(c.Issuers) == 0 && len(c.Tokens) == 0 {
		return fmt.Errorf("gateway: neither issuers nor tokens are configured, so no one could be authenticated")
	}
	for i, s := range c.ScopesSupported {
		if !validScope(s) {
			return fmt.Errorf("gateway.scopes_supported[%d]: %q is not a scope token", i, s)
		}
	}
	seen := map[string]int{}
	introspecting := -1
	for i, is := range c.Issuers {
		key := fmt.Sprintf("gateway.issuers[%d]", i)
		if is.Issuer == "" {
			return fmt.Errorf("%s.issuer: missing", key)
		}
		if err := checkURL(is.Issuer, true); err != nil {
			return fmt.Errorf("%s.issuer: %w", key, err)
		}
		if j, dup := seen[is.Issuer]; dup {
			return fmt.Errorf("%s.issuer: %q is also gateway.issuers[%d]", key, is.Issuer, j)
		}
		seen[is.Issuer] = i
		if is.Audience == "" {
			return fmt.Errorf("%s.audience: missing (and gateway.resource is empty)", key)
		}
		for j, a := range is.Algorithms {
			if !slices.Contains(signatureAlgorithms, a) {
				return fmt.Errorf("%s.algorithms[%d]: %q is not accepted (one of %s; never none or an HMAC)", key, j, a, strings.Join(signatureAlgorithms, ", "))
			}
		}
		if is.JWKSURI != "" {
			if err := checkURL(is.JWKSURI, false); err != nil {
				return fmt.Errorf("%s.jwks_uri: %w", key, err)
			}
		}
		if is.JWKSRefetchInterval < 0 {
			return fmt.Errorf("%s.jwks_refetch_interval: %s is negative", key, is.JWKSRefetchInterval)
		}
		if is.JWKSMaxAge < is.JWKSRefetchInterval {
			return fmt.Errorf("%s.jwks_max_age: %s is shorter than jwks_refetch_interval %s", key, is.JWKSMaxAge, is.JWKSRefetchInterval)
		}
		if in := is.Introspection; in != nil {
			if introspecting >= 0 {
				// An opaque token names no issuer: with two endpoints, one
				// issuer's token would be shown to the other.
				return fmt.Errorf("%s.introspection: gateway.issuers[%d] introspects already; only one issuer may, so a token is never sent to an issuer it may not come from", key, introspecting)
			}
			introspecting = i
			if err := checkURL(in.Endpoint, false); err != nil {
				return fmt.Errorf("%s.introspection.endpoint: %w", key, err)
			}
			if in.ClientIDEnv == "" {
				return fmt.Errorf("%s.introspection.client_id_env: missing", key)
			}
			if in.ClientSecretEnv == "" {
				return fmt.Errorf("%s.introspection.client_secret_env: missing", key)
			}
			if in.CacheTTL < 0 {
				return fmt.Errorf("%s.introspection.cache_ttl: %s is negative", key, in.CacheTTL)
			}
			if in.CacheSize < 0 {
				return fmt.Errorf("%s.introspection.cache_size: %d is negative", key, in.CacheSize)
			}
		}
	}
	hashes := map[string]int{}
	for i, t := range c.Tokens {
		key := fmt.Sprintf("gateway.tokens[%d]", i)
		if t.Subject == "" {
			return fmt.Errorf("%s.subject: missing", key)
		}
		h := strings.ToLower(t.SHA256)
		if b, err := hex.DecodeString(h); err != nil || len(b) != 32 {
			return fmt.Errorf("%s.sha256: not 64 hex digits (the sha256 of the token, e.g. from sha256sum)", key)
		}
		if j, dup := hashes[h]; dup {
			return fmt.Errorf("%s.sha256: the same as gateway.tokens[%d]", key, j)
		}
		hashes[h] = i
		for j, s := range t.Scopes {
			if !validScope(s) {
				return fmt.Errorf("%s.scopes[%d]: %q is not a scope token", key, j, s)
			}
		}
	}
	return nil
}

// checkURL checks that s is an absolute https URL, or http on a loopback
// host, without a fragment (nor a query when identifier is set: an issuer
// or a resource URI).
func checkURL(s string, identifier bool) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", s, err)
	}
	if u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", s)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && loopback(u.Hostname()):
	default:
		return fmt.Errorf("%q must be https (http only on a loopback host)", s)
	}
	if u.Fragment != "" || strings.Contains(s, "#") {
		return fmt.Errorf("%q has a fragment", s)
	}
	if identifier && u.RawQuery != "" {
		return fmt.Errorf("%q has a query", s)
	}
	return nil
}

// loopback reports whether host is localhost or a loopback address.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validScope reports whether s is an RFC 6749 scope-token:
// 1*( %x21 / %x23-5B / %x5D-7E ).
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
