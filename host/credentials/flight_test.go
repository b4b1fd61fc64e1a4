package credentials

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/sdktest"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// perRequest is an Authenticator whose headers are for one request only
// (ValidUntil zero, as a DPoP proof is): they name the request.
type perRequest struct {
	counting
	headerCalls atomic.Int32
}

func (p *perRequest) Headers(_ context.Context, r auth.HeadersRequest) (auth.Headers, error) {
	p.headerCalls.Add(1)
	return auth.Headers{Headers: map[string]string{"DPoP": r.Method + " " + r.URL}}, nil
}

// A challenge that shares another's flight gets the answer's retry, but
// when the answer's headers were for that other request alone it asks
// for headers of its own: two requests never go out with one proof.
func TestSharedFlightOfPerRequestHeaders(t *testing.T) {
	a := &perRequest{}
	h := sdktest.AuthInProcess(t, func(context.Context, auth.Config) (auth.Authenticator, error) { return a, nil })
	client, err := h.Open(context.Background(), auth.Config{Server: "s", Method: "fake"}, pluginhost.AuthOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{name: "s", fixed: client, log: hclog.NewNullLogger()}
	// A flight under way, for a GET: the challenge below joins it.
	f := &flight{done: make(chan struct{})}
	s.pending = f
	got := make(chan transport.ChallengeAnswer, 1)
	go func() {
		ans, err := s.Challenge(context.Background(), transport.ChallengeRequest{Method: "POST", URL: "https://mcp.example/mcp", Status: 401, Attempt: 1})
		if err != nil {
			t.Error(err)
		}
		got <- ans
	}()
	f.ans = transport.ChallengeAnswer{Retry: true, Headers: map[string]string{"DPoP": "GET https://mcp.example/mcp"}}
	f.perRequest = true
	close(f.done)
	ans := <-got
	if !ans.Retry || ans.Headers["DPoP"] != "POST https://mcp.example/mcp" || a.headerCalls.Load() != 1 || a.challenges.Load() != 0 {
		t.Fatalf("the shared answer %+v after %d Headers and %d Challenge calls; want this request's own headers", ans, a.headerCalls.Load(), a.challenges.Load())
	}
}
