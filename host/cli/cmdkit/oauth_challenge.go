package cmdkit

import (
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// ChallengeNamesOAuth reports whether a failure with this sdk code and
// WWW-Authenticate asks for OAuth: a Bearer challenge naming OAuth
// metadata, read by the sdk's one WWW-Authenticate parser (auth's side),
// never by substring.
func ChallengeNamesOAuth(code, challenge string) bool {
	if code != sdk.CodeAuth {
		return false
	}
	bearer, ok := auth.ParseBearer(challenge)
	return ok && bearer.NamesOAuth()
}
