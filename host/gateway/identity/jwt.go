package identity

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// jwt validates a JWT access token: parsed with the accepted algorithms
// only, its (unverified) iss chooses the issuer, whose keys verify the
// signature before any claim is believed.
func (a *Authenticator) jwt(ctx context.Context, tok string) (*Principal, *Error) {
	if len(a.algs) == 0 {
		return nil, errToken("the token is a JWT but no issuer is configured", nil)
	}
	sum := sha256.Sum256([]byte(tok))
	now := a.now()
	if p := a.verified.lookup(sum, now); p != nil {
		return p, nil
	}
	parsed, err := jwt.ParseSigned(tok, a.algs)
	if err != nil {
		return nil, errToken("the token is not a signed JWT with an accepted algorithm", err)
	}
	if len(parsed.Headers) != 1 {
		return nil, errToken("the token does not have exactly one signature", nil)
	}
	var unverified struct {
		Issuer string `json:"iss"`
	}
	if err := parsed.UnsafeClaimsWithoutVerification(&unverified); err != nil {
		return nil, errToken("the token's claims are not a JSON object", err)
	}
	is := a.issuers[unverified.Issuer]
	if is == nil {
		return nil, errToken("the token's issuer is not accepted", fmt.Errorf("iss %q", bounded(unverified.Issuer, 200)))
	}
	if is.intro != nil {
		return a.introspect(ctx, is, tok)
	}
	h := parsed.Headers[0]
	if !slices.Contains(is.algs, jose.SignatureAlgorithm(h.Algorithm)) {
		return nil, errToken(fmt.Sprintf("algorithm %s is not accepted for the token's issuer", bounded(h.Algorithm, 20)), nil)
	}
	key, e := is.keys.key(ctx, h.KeyID, h.Algorithm)
	if e != nil {
		return nil, e
	}
	var claims jwt.Claims
	var raw map[string]any
	if err := parsed.Claims(key.Key, &claims, &raw); err != nil {
		return nil, errToken("the token's signature does not verify", err)
	}
	p, e := a.principal(is, claims, raw, true)
	if e != nil {
		return nil, e
	}
	// Reused until the token expires (by the same skew) or the cache's
	// TTL, whichever is first: a signature is checked once a TTL, not on
	// every request of a client.
	until := now.Add(a.cfg.TokenCacheTTL)
	if exp := claims.Expiry.Time().Add(a.cfg.ClockSkew); exp.Before(until) {
		until = exp
	}
	a.verified.store(sum, p, until, now)
	return p, nil
}

// principal checks the claims of a verified token (or an introspection
// answer) against the issuer's configuration and makes its Principal.
// requireExp is false for introspection, whose answer may omit exp.
func (a *Authenticator) principal(is *issuer, c jwt.Claims, raw map[string]any, requireExp bool) (*Principal, *Error) {
	if requireExp && c.Expiry == nil {
		return nil, errToken("the token has no expiry (exp)", nil)
	}
	if len(c.Audience) == 0 {
		return nil, errToken("the token has no audience (aud)", nil)
	}
	err := c.ValidateWithLeeway(jwt.Expected{
		Issuer:      is.cfg.Issuer,
		AnyAudience: jwt.Audience{is.cfg.Audience},
		Time:        a.now(),
	}, a.cfg.ClockSkew)
	switch {
	case err == nil:
	case errors.Is(err, jwt.ErrInvalidAudience):
		return nil, errToken("the token's audience (aud) does not include "+is.cfg.Audience, nil)
	case errors.Is(err, jwt.ErrExpired):
		return nil, errToken("the token has expired", nil)
	case errors.Is(err, jwt.ErrNotValidYet):
		return nil, errToken("the token is not valid yet (nbf)", nil)
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, errToken("the token is issued in the future (iat)", nil)
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return nil, errToken("the token's issuer is not accepted", nil)
	default:
		return nil, errToken("the token's claims are not valid", err)
	}
	if c.Subject == "" {
		return nil, errToken("the token has no subject (sub)", nil)
	}
	if raw == nil {
		raw = map[string]any{}
	}
	scopes := claimStrings(raw, is.cfg.ScopesClaim, true)
	if is.cfg.ScopesClaim == "" {
		scopes = claimStrings(raw, "scope", true)
		if scopes == nil {
			scopes = claimStrings(raw, "scp", true)
		}
	}
	return &Principal{
		Subject:  c.Subject,
		Issuer:   is.cfg.Issuer,
		Groups:   claimStrings(raw, is.cfg.GroupsClaim, false),
		Scopes:   scopes,
		Claims:   raw,
		ClientID: firstString(raw, "client_id", "azp", "appid"),
	}, nil
}

// claimStrings reads a claim holding strings: an array of strings (other
// elements are skipped), or one string (split on spaces when split, as a
// scope claim is). The name is looked up as it is, then as a dotted path
// into objects. Empty name or absent claim: nil.
func claimStrings(claims map[string]any, name string, split bool) []string {
	if name == "" {
		return nil
	}
	v, ok := claims[name]
	if !ok && strings.Contains(name, ".") {
		v, ok = lookupPath(claims, strings.Split(name, "."))
	}
	if !ok {
		return nil
	}
	switch v := v.(type) {
	case string:
		if split {
			return strings.Fields(v)
		}
		if v == "" {
			return nil
		}
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// lookupPath descends objects along path.
func lookupPath(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, p := range path {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// firstString returns the first of the named claims that is a non-empty
// string.
func firstString(claims map[string]any, names ...string) string {
	for _, n := range names {
		if s, ok := claims[n].(string); ok && s != "" {
			return s
		}
	}
	return ""
}
