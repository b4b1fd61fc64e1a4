package failure_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/session"
	"testing"

	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/sdk"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Each error reaches the host in the shape mcp-go's client gives it: a
// transport failure wrapped in mcptransport.Error around the plugin's
// sdk.Error or a context's end, a JSON-RPC error answer as mcp-go's
// sentinel or a bare message. The code is found through any wrapping, and
// never from the text: a server's message that reads like a session
// expiry or a broken pipe stays the server's answer.
func TestClassification(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want failure.Code
	}{
		{"plugin closed", mcptransport.NewError(sdk.NewError(sdk.CodeClosed, "transport plugin exited")), failure.CodeClosed},
		{"plugin session expired", fmt.Errorf("call: %w", mcptransport.NewError(sdk.NewError(sdk.CodeSessionExpired, "HTTP 404"))), failure.CodeSessionExpired},
		{"plugin login needed", sdk.NewError(sdk.CodeLoginNeeded, "run hermes mcp login x"), failure.CodeLoginNeeded},
		{"deadline", mcptransport.NewError(context.DeadlineExceeded), failure.CodeTimeout},
		{"cancel", mcptransport.NewError(context.Canceled), failure.CodeCanceled},
		{"method not found", fmt.Errorf("%w: Method not found", mcp.ErrMethodNotFound), failure.CodeMethodNotFound},
		{"server text like an expiry", errors.New("Invalid or expired session"), failure.CodeRefused},
		{"server text like a broken pipe", errors.New("write: broken pipe"), failure.CodeRefused},
		{"server text like a closed transport", errors.New("transport is closed"), failure.CodeRefused},
		{"unknown method text", errors.New("Unknown method: ping"), failure.CodeRefused},
	} {
		err := session.Classify(c.err)
		if got := failure.Of(err); got != c.want {
			t.Errorf("%s: Of(FromClient(%v)) = %q, want %q", c.name, c.err, got, c.want)
		}
		if err.Error() != c.err.Error() {
			t.Errorf("%s: FromClient changed the message %q to %q", c.name, c.err, err)
		}
	}
	if failure.FromClient(nil) != nil || failure.Of(nil) != "" {
		t.Error("nil is a failure")
	}
	// Without FromClient an uncoded error is only CodeOther.
	if got := failure.Of(errors.New("session not found")); got != failure.CodeOther {
		t.Errorf("Of(plain) = %q", got)
	}
}

// The outermost coded error decides; an sdk error inside keeps its fields.
func TestOutermostCodeWins(t *testing.T) {
	inner := &sdk.Error{Code: sdk.CodeAuth, Message: "401", Status: 401, WWWAuthenticate: `Bearer realm="x"`}
	err := fmt.Errorf("connect: %w", failure.Wrap(failure.CodeFiltered, inner))
	if failure.Of(err) != failure.CodeFiltered || !failure.Filtered(err) || failure.NeedsLogin(err) {
		t.Errorf("Of = %q", failure.Of(err))
	}
	var se *sdk.Error
	if !errors.As(err, &se) || se.Status != 401 || se.WWWAuthenticate == "" {
		t.Errorf("the sdk error behind it is lost: %+v", se)
	}
	if got := failure.New(failure.CodeBreaker, "open after %d", 3).Error(); got != "open after 3" {
		t.Errorf("New message %q", got)
	}
}

func TestPredicates(t *testing.T) {
	code := func(c string) error { return fmt.Errorf("wrapped: %w", sdk.NewError(c, "x")) }
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"retry closed", failure.Retry(code(sdk.CodeClosed)), true},
		{"retry timeout", failure.Retry(code(sdk.CodeTimeout)), true},
		{"retry plain", failure.Retry(errors.New("x")), true},
		{"retry auth", failure.Retry(code(sdk.CodeAuth)), false},
		{"retry login", failure.Retry(code(sdk.CodeLoginNeeded)), false},
		{"retry missing executable", failure.Retry(code(sdk.CodeNotFound)), false},
		{"retry config", failure.Retry(code(sdk.CodeConfig)), false},
		{"reconnect expired", failure.Reconnect(code(sdk.CodeSessionExpired)), true},
		{"reconnect closed", failure.Reconnect(code(sdk.CodeClosed)), true},
		{"reconnect closed by a cancel", failure.Reconnect(fmt.Errorf("%w: %w", sdk.NewError(sdk.CodeClosed, "x"), context.Canceled)), false},
		{"reconnect refused", failure.Reconnect(failure.FromClient(errors.New("session expired"))), false},
		{"reconnect timeout", failure.Reconnect(code(sdk.CodeTimeout)), false},
		{"needs login auth", failure.NeedsLogin(code(sdk.CodeAuth)), true},
		{"needs login", failure.NeedsLogin(code(sdk.CodeLoginNeeded)), true},
		{"needs login closed", failure.NeedsLogin(code(sdk.CodeClosed)), false},
		{"not found tool", failure.NotFound(failure.New(failure.CodeNoSuchTool, "x")), true},
		{"not found server", failure.NotFound(failure.New(failure.CodeUnknownServer, "x")), true},
		{"not found executable", failure.NotFound(code(sdk.CodeNotFound)), true},
		{"not found filtered", failure.NotFound(failure.New(failure.CodeFiltered, "x")), false},
		{"answered -32601", failure.Answered(session.Classify(mcp.ErrMethodNotFound)), true},
		{"answered other error", failure.Answered(failure.FromClient(errors.New("internal"))), true},
		{"answered closed", failure.Answered(failure.FromClient(code(sdk.CodeClosed))), false},
		{"answered deadline", failure.Answered(failure.FromClient(context.DeadlineExceeded)), false},
		{"closed", failure.Closed(code(sdk.CodeClosed)), true},
		{"timeout", failure.Timeout(code(sdk.CodeTimeout)), true},
		{"interrupted", failure.Interrupted(context.Canceled), true},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}
