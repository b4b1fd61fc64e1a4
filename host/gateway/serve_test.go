package gateway_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hermes-agent/hermes/host/gateway"
	"github.com/hermes-agent/hermes/host/gateway/limits"
	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// heldBackend's echo answers only when the test lets it.
type heldBackend struct {
	echoBackend
	called, release chan struct{}
}

func (h heldBackend) Call(ctx context.Context, p gateway.Person, t gateway.Tool, args json.RawMessage) (mcpvalue.CallResult, error) {
	h.called <- struct{}{}
	<-h.release
	return h.echoBackend.Call(ctx, p, t, args)
}

// A stopping gateway says it is not ready, takes no new connection, and
// lets the call in flight finish within the drain bound.
func TestStopDrainsCallsInFlight(t *testing.T) {
	t.Parallel()
	b := heldBackend{called: make(chan struct{}), release: make(chan struct{})}
	ids := sessionIDs(t)
	g, err := gateway.New(gateway.Options{Backend: b, Authenticate: staticTokens, Policy: devOrEcho(t), SessionIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, ln, time.Hour) }()

	c := connect(t, url, "token-of-alice", "2026-07-28")
	answered := make(chan error, 1)
	go func() {
		res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_up_echo", Arguments: map[string]any{"message": "in flight"}}})
		if err == nil && !strings.Contains(text(res), "in flight") {
			err = &unexpected{res}
		}
		answered <- err
	}()
	<-b.called
	stop()
	// Shutdown closes the listener first: a new connection is refused.
	for {
		conn, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
		if err != nil {
			break
		}
		conn.Close()
	}
	close(b.release)
	if err := <-answered; err != nil {
		t.Fatalf("the call in flight: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

type unexpected struct{ res *mcp.CallToolResult }

func (u *unexpected) Error() string { return "unexpected result: " + text(u.res) }

func TestReadyzAndBodyBound(t *testing.T) {
	t.Parallel()
	ids := sessionIDs(t)
	var notReady atomic.Bool
	g, err := gateway.New(gateway.Options{Backend: echoBackend{}, Authenticate: staticTokens, Policy: devOrEcho(t),
		SessionIDs: ids, MaxRequestBytes: 1024, Ready: func() error {
			if notReady.Load() {
				return errUpstreams
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { _ = g.Serve(ctx, ln, time.Second) }()
	url := "http://" + ln.Addr().String()
	get := func(path string) int {
		res, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if get("/healthz") != 200 || get("/readyz") != 200 {
		t.Fatal("a fresh gateway is not healthy and ready")
	}
	notReady.Store(true)
	if get("/readyz") != http.StatusServiceUnavailable || get("/healthz") != 200 {
		t.Fatal("readyz did not follow Ready, or healthz did")
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(strings.Repeat("x", 2048)))
	req.Header.Set("Authorization", "Bearer token-of-alice")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 512)
	n, _ := res.Body.Read(buf)
	b.Write(buf[:n])
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(b.String(), "gateway.max_request_kb") {
		t.Fatalf("an oversized body: %d %q", res.StatusCode, b.String())
	}
}

var errUpstreams = &net.AddrError{Err: "no upstream listed yet"}

// A person over their limit gets a tool error naming the limit and when to
// retry, audited as limited; another person is not held back.
func TestLimitPerPerson(t *testing.T) {
	t.Parallel()
	ids := sessionIDs(t)
	log, lines := auditFile(t)
	g, err := gateway.New(gateway.Options{Backend: echoBackend{}, Authenticate: staticTokens, Policy: everyone(t),
		SessionIDs: ids, Audit: log, Limits: limits.New(limits.Limits{CallsPerMinute: 2}, "gateway.limits", 0)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(srv.Close)
	alice, bob := connect(t, srv.URL, "token-of-alice", "2026-07-28"), connect(t, srv.URL, "token-of-bob", "2026-07-28")
	call := func(c *client.Client) *mcp.CallToolResult {
		res, err := c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_up_echo", Arguments: map[string]any{"message": "m"}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	call(alice)
	call(alice)
	if res := call(alice); !res.IsError || !strings.Contains(text(res), "2 calls per minute (gateway.limits.calls_per_minute); retry after") {
		t.Fatalf("alice's third call: %+v", text(res))
	}
	if res := call(bob); res.IsError {
		t.Fatalf("bob was held back by alice's limit: %s", text(res))
	}
	var limited int
	for _, r := range lines() {
		if r.Outcome == "limited" {
			limited++
		}
	}
	if limited != 1 {
		t.Fatalf("%d limited calls audited, want 1", limited)
	}
}
