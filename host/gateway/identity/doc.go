// Package identity owns turning an HTTP request's credentials into a
// Principal: the gateway's inbound side as an OAuth 2.1 resource server.
//
// An Authenticator, built from a Config, accepts three kinds of bearer
// token in the Authorization header (RFC 6750 §2.1; never in the URL or a
// form body):
//
//   - JWT access tokens of a configured issuer, validated locally: the
//     issuer matched exactly, the audience containing the gateway's
//     resource URI (RFC 8707), exp (required), nbf and iat within a small
//     clock skew, the algorithm on an allow-list (default RS256, ES256,
//     EdDSA; never "none", never an HMAC), and the signature checked
//     against the issuer's JWKS, found by OIDC discovery or RFC 8414
//     metadata, cached, and fetched again on an unknown key id at most
//     once per bound per issuer. A verified token's Principal is reused
//     for the same token (keyed by its sha256) for a minute at most, never
//     past its exp.
//   - Opaque tokens (and the JWTs of an issuer configured so), asked of the
//     issuer's RFC 7662 introspection endpoint; positive answers are kept
//     briefly in a bounded cache keyed by the token's sha256.
//   - Static bearer tokens for a team without an IdP: only their sha256 is
//     configured, and the presented token's sha256 is compared in constant
//     time.
//
// Refusals are RFC 6750 errors (*Error): 401 with a WWW-Authenticate
// challenge naming the RFC 9728 resource metadata, 403 insufficient_scope
// naming the missing scopes, 400 for a malformed request, 503 when an
// issuer's keys or introspection endpoint cannot be reached. Middleware
// puts the Principal in the request's context; MetadataHandler serves the
// protected resource metadata document.
//
// The client's token is the client's: it is never kept (the introspection
// cache holds its sha256), never logged, never part of an error, and never
// forwarded: Middleware removes the Authorization header from the request
// it hands on, so nothing behind it can pass the token upstream.
//
// JOSE is go-jose (github.com/go-jose/go-jose/v4): it makes the caller
// name the accepted algorithms at parse time (so "none" and an algorithm
// the issuer was not configured for never reach signature checking), it
// refuses a key of the wrong type for an algorithm (an RSA public key is
// never an HMAC secret), it is small (no dependencies beyond the standard
// library and x/crypto), and it is maintained with a published threat
// model for exactly this use: parsing attacker-controlled tokens in a
// network service. lestrrat-go/jwx does as much but brings a larger API
// and its own fetching and caching, which this package needs bounded its
// own way (sizes, times, refetch rate), so it would be used only in part.
package identity
