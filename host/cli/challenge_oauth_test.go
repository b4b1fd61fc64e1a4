package cli

import (
	"testing"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/sdk"
)

// A failure names OAuth when its challenge is a Bearer challenge with
// resource_metadata, as the sdk's parser reads it: not when the words only
// appear somewhere in the header (another scheme's parameter, a quoted
// realm), and never for a failure that is not an auth one.
func TestChallengeNamesOAuth(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		code, challenge string
		want            bool
	}{
		{sdk.CodeAuth, `Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource"`, true},
		{sdk.CodeAuth, `Basic realm="x", Bearer resource_metadata="https://m/.well-known/oauth-protected-resource", scope="a"`, true},
		{sdk.CodeAuth, `Bearer realm="resource_metadata"`, false},
		{sdk.CodeAuth, `Basic resource_metadata="https://m/x"`, false},
		{sdk.CodeAuth, `Bearer error="invalid_token"`, false},
		{sdk.CodeAuth, ``, false},
		{sdk.CodeHTTP, `Bearer resource_metadata="https://m/x"`, false},
	} {
		if got := cmdkit.ChallengeNamesOAuth(c.code, c.challenge); got != c.want {
			t.Errorf("challengeNamesOAuth(%q, %q) = %v, want %v", c.code, c.challenge, got, c.want)
		}
	}
}
