package identity

import (
	"context"
	"slices"
)

// Principal is the person (or client) a request was authenticated as.
type Principal struct {
	// Subject is the token's sub, or a static token's configured subject.
	Subject string
	// Issuer is the token's issuer; empty for a static token.
	Issuer string
	// Groups are read from the issuer's groups_claim (or configured for a
	// static token).
	Groups []string
	// Scopes are the scopes the token grants.
	Scopes []string
	// Claims are the token's verified claims (or the introspection
	// answer's); empty for a static token. They never hold the token.
	// The map is the caller's; values inside it may be shared, so treat
	// them as read-only.
	Claims map[string]any
	// ClientID is the OAuth client the token was issued to (client_id,
	// else azp, else appid), when the token says.
	ClientID string
	// Static reports a static bearer token.
	Static bool
}

// HasScope reports whether p was granted scope.
func (p *Principal) HasScope(scope string) bool {
	return slices.Contains(p.Scopes, scope)
}

// MissingScopes returns those of required that p was not granted, in
// their order; nil when none is missing.
func (p *Principal) MissingScopes(required ...string) []string {
	var missing []string
	for _, s := range required {
		if !p.HasScope(s) && !slices.Contains(missing, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the Principal Middleware put in ctx.
func FromContext(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(*Principal)
	return p, ok && p != nil
}
