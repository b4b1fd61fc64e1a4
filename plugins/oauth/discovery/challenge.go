package discovery

import "github.com/hermes-agent/hermes/sdk/auth"

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1), as the sdk's one parser reads it.
type Challenge = auth.AuthScheme

// ParseChallenges parses a WWW-Authenticate header value with the sdk's
// parser (auth.ParseChallenges), shared by every auth plugin and the host.
func ParseChallenges(header string) []Challenge { return auth.ParseChallenges(header) }

// BearerInfo is what the MCP authorization spec reads from a Bearer
// challenge.
type BearerInfo = auth.BearerChallenge

// BearerChallenge finds the first Bearer challenge in one or more
// WWW-Authenticate header values and returns its parameters
// (auth.ParseBearer). ok is false when there is none.
func BearerChallenge(headers ...string) (BearerInfo, bool) { return auth.ParseBearer(headers...) }
