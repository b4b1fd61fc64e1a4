package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
)

func TestClassify(t *testing.T) {
	tr := newTestTransport(t, transport.Config{Server: "my.server", URL: "http://127.0.0.1:9/mcp?token=abcd1234", Headers: map[string]string{"X-Key": "supersecretvalue"}})
	info := func(status int, challenge string) *respInfo {
		return &respInfo{status: status, challenge: challenge}
	}
	cases := []struct {
		err    error
		info   *respInfo
		code   string
		status int
		has    string
	}{
		{&mcptransport.AuthorizationRequiredError{}, info(401, `Bearer realm="x"`), sdk.CodeAuth, 401, "${MCP_MY_SERVER_API_KEY}"},
		{errors.New("request failed with status 403: nope"), info(403, ""), sdk.CodeAuth, 403, "hermes mcp add my.server --url http://127.0.0.1:9/mcp --header"},
		// A 404 to a request carrying a session id, and every request after
		// it: the server forgot the session.
		{fmt.Errorf("failed to send request: %w", mcptransport.ErrSessionTerminated), &respInfo{status: 404, withSession: true}, sdk.CodeSessionExpired, 404, "no longer knows the session"},
		{fmt.Errorf("failed to send request: %w", mcptransport.ErrSessionTerminated), nil, sdk.CodeSessionExpired, 404, "no longer knows the session"},
		// A 404 without a session is a wrong URL.
		{fmt.Errorf("failed to send request: %w", mcptransport.ErrSessionTerminated), info(404, ""), sdk.CodeHTTP, 404, "check the URL"},
		// What the server says in a body is the host's to read.
		{errors.New("request failed with status 400: Invalid or expired session"), info(400, ""), sdk.CodeHTTP, 400, "HTTP 400 Bad Request: Invalid or expired session"},
		{errors.New("request failed with status 502: bad gateway supersecretvalue"), info(502, ""), sdk.CodeHTTP, 502, "HTTP 502"},
		{mcptransport.ErrLegacySSEServer, info(405, ""), sdk.CodeHTTP, 405, "transport: sse"},
		{errors.New("unexpected content type: text/html"), &respInfo{status: 200, contentType: "text/html"}, sdk.CodeNotMCP, 0, "text/html"},
		{fmt.Errorf("Post \"http://127.0.0.1:9/mcp?token=abcd1234\": %w", &netErr{}), nil, sdk.CodeClosed, 0, "cannot reach"},
		{context.DeadlineExceeded, nil, sdk.CodeTimeout, 0, "timed out"},
		{errors.New("timeout waiting for SSE response after 1s"), nil, sdk.CodeTimeout, 0, "timed out"},
		{context.Canceled, nil, sdk.CodeCanceled, 0, "cancelled"},
	}
	for _, c := range cases {
		err := tr.classify(c.err, c.info, "tools/call")
		se := sdkError(t, err)
		if se.Code != c.code || se.Status != c.status || !strings.Contains(se.Message, c.has) {
			t.Errorf("%v: got %s/%d %q", c.err, se.Code, se.Status, se.Message)
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
}

// netErr is a connection refused as the net package reports it.
type netErr struct{}

func (*netErr) Error() string   { return "dial tcp 127.0.0.1:9: connect: connection refused" }
func (*netErr) Timeout() bool   { return false }
func (*netErr) Temporary() bool { return false }
func (*netErr) Unwrap() error   { return io.EOF }

func TestLogsScrubbed(t *testing.T) {
	var buf strings.Builder
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Trace})
	tr, err := newTransport(transport.Config{Server: "s", URL: "http://127.0.0.1:9/mcp?token=abcd1234",
		Headers: map[string]string{"Authorization": "Bearer s3cr3t-value"}}, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	l := newSlogger(tr.log, tr.scrub)
	l.Error("failed to send request to http://127.0.0.1:9/mcp?token=abcd1234", "err", errors.New("token s3cr3t-value refused"), "url", "http://127.0.0.1:9/mcp?token=abcd1234")
	out := buf.String()
	if out == "" || strings.Contains(out, "abcd1234") || strings.Contains(out, "s3cr3t-value") {
		t.Fatalf("log line %q", out)
	}
}
