package registry_test

import (
	"fmt"
	"testing"

	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/sdk"
)

// A server that needs a login is not retried (only the user can log in),
// and its failure keeps the code and the challenge for the commands that
// explain it.
func TestLoginNeededIsNotRetried(t *testing.T) {
	t.Parallel()
	ce := &session.ConnectError{Server: "s", Err: sdk.NewError(sdk.CodeLoginNeeded, "MCP server 's' needs a login: no token is stored; run: hermes mcp login s")}
	if registry.Retryable(ce) {
		t.Error("a connect that needs a login is retried")
	}
	if registry.Retryable(fmt.Errorf("wrapped: %w", sdk.NewError(sdk.CodeLoginNeeded, "x"))) {
		t.Error("an sdk error that needs a login is retried")
	}
	if !registry.Retryable(&session.ConnectError{Err: sdk.NewError(sdk.CodeClosed, "gone")}) {
		t.Error("a closed connection is not retried")
	}
	code, ch := registry.FailureCode(fmt.Errorf("wrapped: %w", &session.ConnectError{Err: &sdk.Error{Code: sdk.CodeAuth, WWWAuthenticate: `Bearer resource_metadata="https://x/.well-known/oauth-protected-resource"`}}))
	if code != sdk.CodeAuth || ch == "" {
		t.Errorf("FailureCode = %q, %q", code, ch)
	}
	if code, ch := registry.FailureCode(fmt.Errorf("plain")); code != "" || ch != "" {
		t.Errorf("FailureCode(plain) = %q, %q", code, ch)
	}
}
