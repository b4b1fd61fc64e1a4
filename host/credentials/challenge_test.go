package credentials

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/sdktest"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// counting is an Authenticator that counts the calls the host makes into
// it; its token changes on every challenge.
type counting struct {
	headers, challenges atomic.Int32
	token               atomic.Int32
	withHeaders         bool // the answer carries the new headers
}

func (c *counting) hdrs() auth.Headers {
	return auth.Headers{Headers: map[string]string{"Authorization": "Bearer t" + string(rune('0'+c.token.Load()))}, ValidUntil: time.Now().Add(time.Hour)}
}

func (c *counting) Headers(context.Context, auth.HeadersRequest) (auth.Headers, error) {
	c.headers.Add(1)
	return c.hdrs(), nil
}

func (c *counting) Challenge(context.Context, auth.Challenge, auth.UI) (auth.Answer, error) {
	c.challenges.Add(1)
	c.token.Add(1)
	if !c.withHeaders {
		return auth.Answer{Retry: true}, nil
	}
	return auth.Answer{Retry: true, Headers: c.hdrs()}, nil
}

func (c *counting) Login(context.Context, auth.LoginOptions, auth.UI) (auth.Status, error) {
	return auth.Status{}, nil
}
func (c *counting) Logout(context.Context) (auth.LogoutResult, error) {
	return auth.LogoutResult{}, nil
}
func (c *counting) Status(context.Context) (auth.Status, error) { return auth.Status{}, nil }

// One refresh is one call into the auth plugin: the transport's Challenge
// gets the new headers in its answer, and the retry needs no Headers call
// from the transport (nor from the host: the answer's headers are cached).
// A plugin that answers retry without headers costs one Headers call more,
// made by the host within the same Challenge.
func TestChallengeIsOneRoundTrip(t *testing.T) {
	for _, withHeaders := range []bool{true, false} {
		a := &counting{withHeaders: withHeaders}
		h := sdktest.AuthInProcess(t, func(context.Context, auth.Config) (auth.Authenticator, error) { return a, nil })
		client, err := h.Open(context.Background(), auth.Config{Server: "s", Method: "fake"}, pluginhost.AuthOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s := &Server{name: "s", fixed: client, log: hclog.NewNullLogger()}
		ctx := context.Background()
		if _, err := s.Headers(ctx, transport.HeadersRequest{Method: "POST", URL: "https://mcp.example/mcp"}); err != nil {
			t.Fatal(err)
		}
		ans, err := s.Challenge(ctx, transport.ChallengeRequest{Method: "POST", URL: "https://mcp.example/mcp", Status: 401, Attempt: 1,
			WWWAuthenticate: []string{`Bearer error="invalid_token"`}})
		if err != nil || !ans.Retry || ans.Headers["Authorization"] != "Bearer t1" {
			t.Fatalf("withHeaders=%v: Challenge = %+v, %v; want a retry with the new token", withHeaders, ans, err)
		}
		// The transport's retry: the cached answer, no call into the plugin.
		got, err := s.Headers(ctx, transport.HeadersRequest{Method: "POST", URL: "https://mcp.example/mcp"})
		if err != nil || got["Authorization"] != "Bearer t1" {
			t.Fatalf("withHeaders=%v: headers after the challenge = %v, %v", withHeaders, got, err)
		}
		wantHeaders := int32(1)
		if !withHeaders {
			wantHeaders = 2
		}
		if n, m := a.challenges.Load(), a.headers.Load(); n != 1 || m != wantHeaders {
			t.Errorf("withHeaders=%v: a refresh cost %d Challenge and %d Headers calls into the auth plugin, want 1 and %d", withHeaders, n, m, wantHeaders)
		}
	}
}
