package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hermes-agent/hermes/host/gateway"
	"github.com/hermes-agent/hermes/host/gateway/telemetry"
	"github.com/hermes-agent/hermes/host/homedir"
	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// upstreams are the two ways the Go test server asks its client: within
// the call's result (2026-07-28, input_required: tied to the call by its
// context) and as requests of its own (2025-11-25: tied by the calls in
// flight when they arrive).
var upstreams = []struct{ name, args string }{
	{"2026-07-28", "[--trace]"},
	{"2025-11-25", "[--trace, --protocols, 2025-11-25]"},
}

// relayFront is one gateway over the Go test server with args (a YAML
// list), through the real stdio plugin; it reports on streams the GET
// streams clients open, by the token that opened them.
type relayFront struct {
	url, home string
	streams   chan string
}

func newRelayFront(t *testing.T, args string, tel *telemetry.Telemetry) *relayFront {
	t.Helper()
	reg, home := liveRegistryIn(t, args)
	ids := sessionIDs(t)
	g, err := gateway.New(gateway.Options{Backend: &gateway.Registries{Shared: reg}, Authenticate: staticTokens,
		Policy: everyone(t), SessionIDs: ids, Telemetry: tel})
	if err != nil {
		t.Fatal(err)
	}
	f := &relayFront{home: home, streams: make(chan string, 16)}
	h := g.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Mcp-Session-Id") != "" {
			f.streams <- r.Header.Get("Authorization")
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// waitStarted waits for the n-th sleep to start upstream.
func (f *relayFront) waitStarted(t *testing.T, n int) {
	t.Helper()
	log := homedir.Dir(f.home).ServerStderrLog()
	testwait.For(t, time.Minute, fmt.Sprintf("sleep %d to start upstream", n), func() bool {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), testserver.TraceSleepStarted) >= n
	})
}

// asker is a person's go-sdk client of the 2025-11-25 revision that
// answers sampling with "<name> answers: <prompt>" and elicitation with
// {"value": "<name>'s value"}, and records what it was asked.
type asker struct {
	name string
	s    *gomcp.ClientSession
	mu   sync.Mutex
	seen []string
}

func (a *asker) saw() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// newAsker connects person's token to f, with the handlers when answers,
// and waits for its GET stream.
func newAsker(t *testing.T, f *relayFront, name, token string, answers bool) *asker {
	t.Helper()
	a := &asker{name: name}
	opts := &gomcp.ClientOptions{}
	if answers {
		opts.CreateMessageHandler = func(_ context.Context, req *gomcp.CreateMessageRequest) (*gomcp.CreateMessageResult, error) {
			prompt := req.Params.Messages[0].Content.(*gomcp.TextContent).Text
			a.mu.Lock()
			a.seen = append(a.seen, prompt)
			a.mu.Unlock()
			return &gomcp.CreateMessageResult{Role: "assistant", Model: "model-of-" + name, Content: &gomcp.TextContent{Text: name + " answers: " + prompt}}, nil
		}
		opts.ElicitationHandler = func(_ context.Context, req *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
			a.mu.Lock()
			a.seen = append(a.seen, req.Params.Message)
			a.mu.Unlock()
			return &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"value": name + "'s value"}}, nil
		}
	}
	c := gomcp.NewClient(&gomcp.Implementation{Name: "go-sdk-" + name, Version: "1"}, opts)
	tr := &gomcp.StreamableClientTransport{Endpoint: f.url + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}}
	s, err := c.Connect(t.Context(), tr, &gomcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	a.s = s
	select {
	case got := <-f.streams:
		if got != "Bearer "+token {
			t.Fatalf("the GET stream of %s came with %q", name, got)
		}
	case <-t.Context().Done():
		t.Fatal("no GET stream")
	}
	return a
}

// call calls tool with args and returns its text and whether it is a tool
// error; a protocol error fails the test.
func (a *asker) call(ctx context.Context, t *testing.T, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := a.s.CallTool(ctx, &gomcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s's %s: %v", a.name, tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*gomcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// An upstream's sampling and elicitation requests during a call through
// the gateway reach the go-sdk client that made the call, and its answers
// reach the upstream, whichever way the upstream asks.
func TestSamplingAndElicitationRelayedToTheCallingClient(t *testing.T) {
	t.Parallel()
	for _, up := range upstreams {
		t.Run(up.name, func(t *testing.T) {
			t.Parallel()
			f := newRelayFront(t, up.args, nil)
			alice := newAsker(t, f, "alice", "token-of-alice", true)
			got, isErr := alice.call(t.Context(), t, "mcp_ts_sample", map[string]any{"prompt": "what is 2+2"})
			if isErr || got != "alice answers: what is 2+2" {
				t.Fatalf("sample through the gateway: %q (tool error %v)", got, isErr)
			}
			got, isErr = alice.call(t.Context(), t, "mcp_ts_elicit", map[string]any{"message": "your value?"})
			var out struct {
				Action  string
				Content map[string]any
			}
			if err := json.Unmarshal([]byte(got), &out); err != nil || isErr || out.Action != "accept" || out.Content["value"] != "alice's value" {
				t.Fatalf("elicit through the gateway: %q (tool error %v)", got, isErr)
			}
			if seen := alice.saw(); len(seen) != 2 || seen[0] != "what is 2+2" || seen[1] != "your value?" {
				t.Fatalf("alice was asked %q", seen)
			}
		})
	}
}

// A client that did not declare the capability, or that speaks the
// 2026-07-28 revision, gets the call's error naming why; nothing is asked
// of anyone.
func TestRelayDeclinedWithAClearError(t *testing.T) {
	t.Parallel()
	for _, up := range upstreams {
		t.Run(up.name, func(t *testing.T) {
			t.Parallel()
			f := newRelayFront(t, up.args, nil)
			bob := newAsker(t, f, "bob", "token-of-bob", false)
			for tool, want := range map[string]string{
				"mcp_ts_sample": "did not declare the sampling capability",
				"mcp_ts_elicit": "did not declare the elicitation capability",
			} {
				got, isErr := bob.call(t.Context(), t, tool, map[string]any{"prompt": "p"})
				if !isErr || !strings.Contains(got, want) {
					t.Errorf("%s without the capability: %q (tool error %v), want an error saying %q", tool, got, isErr, want)
				}
			}
			// A 2026-07-28 client with a handler: asked within a call's
			// result, which the gateway does not pass on.
			tr, err := transport.NewStreamableHTTP(f.url+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer token-of-alice"}))
			if err != nil {
				t.Fatal(err)
			}
			var asked atomic.Int64
			c := client.NewClient(tr, client.WithSamplingHandler(samplerFunc(func() { asked.Add(1) })))
			t.Cleanup(func() { _ = c.Close() })
			if err := c.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{}); err != nil {
				t.Fatal(err)
			}
			res, err := c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_sample", Arguments: map[string]any{"prompt": "p"}}})
			if err != nil || !res.IsError || !strings.Contains(text(res), "2026-07-28") || asked.Load() != 0 {
				t.Fatalf("a 2026-07-28 client's sample: %v %+v, its handler asked %d times", err, res, asked.Load())
			}
		})
	}
}

type samplerFunc func()

func (f samplerFunc) CreateMessage(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	f()
	return &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("x")}, Model: "m"}, nil
}

// Two people calling one shared upstream at once never receive each
// other's requests. An upstream that asks within the call's result is
// answered by each caller; one that asks on its own while both have calls
// in flight cannot say whose request it is, and is declined, while one
// that asks while only one person's calls are in flight reaches them.
func TestTwoPeopleNeverReceiveEachOthersRequests(t *testing.T) {
	t.Parallel()
	for _, up := range upstreams {
		t.Run(up.name, func(t *testing.T) {
			t.Parallel()
			f := newRelayFront(t, up.args, nil)
			alice := newAsker(t, f, "alice", "token-of-alice", true)
			bob := newAsker(t, f, "bob", "token-of-bob", true)
			// Alice's long call holds her place on the upstream's
			// connection while both ask.
			sleepCtx, stopSleep := context.WithCancel(t.Context())
			slept := make(chan struct{})
			go func() {
				defer close(slept)
				_, _ = alice.s.CallTool(sleepCtx, &gomcp.CallToolParams{Name: "mcp_ts_sleep", Arguments: map[string]any{"ms": 600000}})
			}()
			f.waitStarted(t, 1)
			var wg sync.WaitGroup
			results := map[string][]string{}
			var mu sync.Mutex
			for _, a := range []*asker{alice, bob} {
				for i := range 3 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						got, isErr := a.call(t.Context(), t, "mcp_ts_sample", map[string]any{"prompt": fmt.Sprintf("%s's question %d", a.name, i)})
						if isErr {
							got = "error: " + got
						}
						mu.Lock()
						results[a.name] = append(results[a.name], got)
						mu.Unlock()
					}()
				}
			}
			wg.Wait()
			stopSleep()
			<-slept
			for _, a := range []*asker{alice, bob} {
				for _, q := range a.saw() {
					if !strings.HasPrefix(q, a.name+"'s question") {
						t.Errorf("%s was asked %q", a.name, q)
					}
				}
				for _, r := range results[a.name] {
					switch {
					case strings.HasPrefix(r, a.name+" answers: "+a.name+"'s question"):
					case up.name == "2025-11-25" && strings.HasPrefix(r, "error: ") && strings.Contains(r, "callers were in flight"):
					default:
						t.Errorf("%s's sample: %q", a.name, r)
					}
				}
			}
			if up.name == "2026-07-28" && (len(alice.saw()) != 3 || len(bob.saw()) != 3) {
				t.Errorf("asked within the call's result, alice answered %d and bob %d of their 3 each", len(alice.saw()), len(bob.saw()))
			}
			// Bob's calls are over: alice's sleep alone is in flight, and an
			// upstream asking on its own reaches her.
			go func() {
				_, err := alice.s.CallTool(t.Context(), &gomcp.CallToolParams{Name: "mcp_ts_sleep", Arguments: map[string]any{"ms": 600000}})
				if err != nil && t.Context().Err() == nil {
					t.Errorf("alice's second sleep: %v", err)
				}
			}()
			f.waitStarted(t, 2)
			if got, isErr := alice.call(t.Context(), t, "mcp_ts_sample", map[string]any{"prompt": "alice alone"}); isErr || got != "alice answers: alice alone" {
				t.Fatalf("alice's sample with only her calls in flight: %q (tool error %v)", got, isErr)
			}
		})
	}
}

// A 2025-11-25 client's notifications/cancelled cancels the call upstream:
// the upstream is told (notifications/cancelled over stdio), its sleep ends
// early and counts the cancellation, and the call's stream ends.
func TestNotificationsCancelledCancelsTheCallUpstream(t *testing.T) {
	t.Parallel()
	f := newRelayFront(t, "[--trace]", nil)
	post := func(session, body string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer token-of-alice")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	init := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	sid := init.Header.Get("Mcp-Session-Id")
	if init.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d", init.StatusCode)
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ended := make(chan string, 1)
	go func() {
		res := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp_ts_sleep","arguments":{"ms":600000}}}`)
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := res.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		ended <- b.String()
	}()
	f.waitStarted(t, 1)
	if res := post(sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the person gave up"}}`); res.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: %d", res.StatusCode)
	}
	select {
	case body := <-ended:
		if strings.Contains(body, "slept") {
			t.Fatalf("the cancelled call was answered with the sleep's result: %s", body)
		}
	case <-t.Context().Done():
		t.Fatal("the cancelled call's stream did not end")
	}
	bob := connect(t, f.url, "token-of-bob", "2025-11-25")
	testwait.For(t, time.Minute, "the upstream to count the cancellation", func() bool {
		res, err := bob.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_cancelled_count"}})
		return err == nil && text(res) == "1"
	})
}

// A GET stream is opened only with the person's own session id: another
// person's id is refused, so that their stream cannot receive the
// requests relayed to the session's owner.
func TestGETStreamNeedsThePersonsOwnSession(t *testing.T) {
	t.Parallel()
	f := newRelayFront(t, "[]", nil)
	alice := newAsker(t, f, "alice", "token-of-alice", true)
	get := func(token string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, f.url+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Mcp-Session-Id", alice.s.ID())
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := get("token-of-bob"); code != http.StatusNotFound {
		t.Fatalf("bob's GET with alice's session id: %d, want 404", code)
	}
}
