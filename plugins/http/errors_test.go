package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// TestClassify: what the wire said becomes a code the host acts on, with a
// message that says what to do and leaks no secret.
func TestClassify(t *testing.T) {
	tr := newTestTransport(t, transport.Config{Server: "my.server", URL: "http://127.0.0.1:9/mcp?token=abcd1234", Headers: map[string]string{"X-Key": "supersecretvalue"}})
	cases := []struct {
		err    *sdk.Error
		code   string
		status int
		has    string
	}{
		{tr.statusError("tools/call", 401, `Bearer realm="x"`, true, nil, nil), sdk.CodeAuth, 401, "${MCP_MY_SERVER_API_KEY}"},
		{tr.statusError("tools/call", 403, "", true, []byte("nope"), nil), sdk.CodeAuth, 403, "hermes mcp add my.server --url http://127.0.0.1:9/mcp --header"},
		// A 404 to a request carrying a session id: the server forgot
		// the session.
		{tr.statusError("tools/call", 404, "", true, nil, nil), sdk.CodeSessionExpired, 404, "no longer knows the session"},
		// A 404 without a session is a wrong URL.
		{tr.statusError("tools/call", 404, "", false, nil, nil), sdk.CodeHTTP, 404, "check the URL"},
		// What the server says in a body is the host's to read.
		{tr.statusError("tools/call", 400, "", true, []byte("Invalid or expired session"), nil), sdk.CodeHTTP, 400, "HTTP 400 Bad Request: Invalid or expired session"},
		{tr.statusError("tools/call", 502, "", true, []byte("bad gateway supersecretvalue"), nil), sdk.CodeHTTP, 502, "HTTP 502"},
		{tr.statusError("initialize", 405, "", false, nil, nil), sdk.CodeHTTP, 405, "transport: sse"},
		{tr.statusError("initialize", 400, "", false, []byte(`{"detail":"x"}`), nil), sdk.CodeHTTP, 400, "refused initialize with HTTP 400"},
		{tr.notMCPError("text/html; charset=utf-8"), sdk.CodeNotMCP, 0, "text/html"},
		{tr.requestError(fmt.Errorf("Post \"http://127.0.0.1:9/mcp?token=abcd1234\": %w", &netErr{}), "tools/call"), sdk.CodeClosed, 0, "cannot reach"},
		{tr.requestError(context.DeadlineExceeded, "tools/call"), sdk.CodeTimeout, 0, "timed out"},
		{tr.requestError(context.Canceled, "tools/call"), sdk.CodeCanceled, 0, "cancelled"},
		{tr.requestError(sdk.NewError(sdk.CodeLoginNeeded, "run hermes mcp login"), "tools/call"), sdk.CodeLoginNeeded, 0, "hermes mcp login"},
		{tr.cutOffError("tools/call", io.ErrUnexpectedEOF), sdk.CodeClosed, 0, "ended the response to tools/call before answering"},
		{tr.tooLargeError(true), sdk.CodeTooLarge, 0, "an SSE event over the limit"},
	}
	for i, c := range cases {
		se := c.err
		if se.Code != c.code || se.Status != c.status || !strings.Contains(se.Message, c.has) {
			t.Errorf("case %d: got %s/%d %q", i, se.Code, se.Status, se.Message)
		}
		for _, secret := range []string{"abcd1234", "supersecretvalue"} {
			if strings.Contains(se.Message, secret) {
				t.Errorf("%q leaks %s", se.Message, secret)
			}
		}
	}
	if se := tr.timeoutError("tools/call", 2*time.Second, "timeout"); se.Code != sdk.CodeTimeout || !strings.Contains(se.Message, "within 2s (timeout in config.yaml)") {
		t.Errorf("timeout error %s %q", se.Code, se.Message)
	}
	// The host's answer to a challenge is the error of the exchange.
	_, info := withInfo(context.Background())
	info.authFailed(sdk.NewError(sdk.CodeLoginNeeded, "needs a login"))
	if se := tr.statusError("tools/call", 401, "", true, nil, info); se.Code != sdk.CodeLoginNeeded {
		t.Errorf("host auth error: got %s %q", se.Code, se.Message)
	}
}

// netErr is a connection refused as the net package reports it.
type netErr struct{}

func (*netErr) Error() string   { return "dial tcp 127.0.0.1:9: connect: connection refused" }
func (*netErr) Timeout() bool   { return false }
func (*netErr) Temporary() bool { return false }
func (*netErr) Unwrap() error   { return io.EOF }

// TestScrub: what the plugin logs or reports shows the URL without its
// query and no header value.
func TestScrub(t *testing.T) {
	tr := newTestTransport(t, transport.Config{Server: "s", URL: "http://127.0.0.1:9/mcp?token=abcd1234",
		Headers: map[string]string{"Authorization": "Bearer s3cr3t-value"}})
	out := tr.scrub("failed to send request to http://127.0.0.1:9/mcp?token=abcd1234: token s3cr3t-value refused\nsecond line")
	if strings.Contains(out, "abcd1234") || strings.Contains(out, "s3cr3t-value") || strings.Contains(out, "\n") {
		t.Fatalf("scrubbed %q", out)
	}
}
