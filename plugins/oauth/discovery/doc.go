// Package discovery owns the discovery and client-registration half of the
// MCP authorization spec (revisions 2025-11-25 and 2026-07-28, with the
// 2025-03-26 fallbacks): it reads WWW-Authenticate challenges (RFC 9110
// §11.6.1), finds and checks protected resource metadata (RFC 9728) and
// authorization server metadata (RFC 8414, OpenID Connect Discovery 1.0),
// picks the scope to ask for, decides how the client identifies itself
// (pre-registered client, client ID metadata document, or RFC 7591 dynamic
// registration, which it performs) and checks the RFC 9207 iss parameter of
// an authorization response.
//
// It does not run the authorization request, the browser, the callback
// listener or the token endpoint, and it stores nothing: those belong to the
// rest of the plugin.
//
// Everything read from the network is treated as hostile: every document is
// bounded in size (MaxDocumentSize) and time (FetchTimeout, within the
// caller's context), only http and https URLs are fetched, values are
// checked before use, and values quoted in errors are escaped and cut short.
//
// The package depends on the standard library only.
package discovery
