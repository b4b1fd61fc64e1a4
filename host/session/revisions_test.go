package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/mark3labs/mcp-go/mcp"
)

// revConn is a session pinned to one MCP revision, with what the host's
// side of it saw: the answers its handlers gave and the notifications that
// reached Deps.OnNotification.
type revConn struct {
	rev   string
	s     *session.Session
	home  string
	h     *revHandlers
	notes *noteLog
}

// revCase is one MCP feature exercised over a revConn.
type revCase struct {
	name string
	run  func(t *testing.T, c *revConn)
}

// revHandlers answers the server's requests as handlers does, and counts
// the roots requests.
type revHandlers struct {
	handlers
	roots atomic.Int32
}

func (h *revHandlers) ListRoots(ctx context.Context) ([]mcpvalue.Root, error) {
	h.roots.Add(1)
	return h.handlers.ListRoots(ctx)
}

// sampledPrompts and elicitedMessages return what the host's sampling and
// elicitation handlers were asked.
func (h *revHandlers) sampledPrompts() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.sampled)
}

func (h *revHandlers) elicitedMessages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.elicited)
}

// connectAt connects to srv pinned to rev through the real transport
// plugin, with the host's handlers and a notification log, and checks that
// the session speaks rev.
func connectAt(t *testing.T, d session.Deps, srv *config.Server, rev string) *revConn {
	t.Helper()
	c := &revConn{rev: rev, home: d.Home, h: &revHandlers{}, notes: &noteLog{}}
	d.Sampling, d.Elicitation, d.Roots = c.h, c.h, c.h
	d.OnNotification = c.notes.add
	srv.Protocol = rev
	c.s = connect(t, d, srv)
	if c.s.Protocol.Revision != rev || c.s.Protocol.Source != session.SourcePinned {
		t.Fatalf("session protocol %+v, want %s pinned", c.s.Protocol, rev)
	}
	if c.s.Init.ProtocolVersion != rev {
		t.Fatalf("initialize result says %s, want %s", c.s.Init.ProtocolVersion, rev)
	}
	return c
}

// text calls tool and returns its text, failing the test on an error or
// an isError result.
func (c *revConn) text(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	return callText(t, c.s, tool, args)
}

// toolNames lists the session's tools.
func (c *revConn) toolNames(t *testing.T) []string {
	t.Helper()
	res, err := c.s.Client.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// progressOf returns the progress notifications the host received for
// token, in order of arrival.
func (c *revConn) progressOf(token string) []map[string]any {
	c.notes.mu.Lock()
	defer c.notes.mu.Unlock()
	var out []map[string]any
	for _, n := range c.notes.notes {
		if n.Method == string(mcp.MethodNotificationProgress) && n.Params["progressToken"] == token {
			out = append(out, n.Params)
		}
	}
	return out
}

// first returns the first notification of method as JSON, or "".
func (l *noteLog) first(method string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.notes {
		if n.Method == method {
			b, _ := json.Marshal(n)
			return string(b)
		}
	}
	return ""
}

// waitProgress waits until the host received n progress notifications for
// token, and returns them.
func (c *revConn) waitProgress(t *testing.T, token string, n int) []map[string]any {
	t.Helper()
	testwait.For(t, 10*time.Second, fmt.Sprintf("%d notifications/progress for token %s", n, token), func() bool {
		return len(c.progressOf(token)) >= n
	})
	return c.progressOf(token)
}

// callProgress calls tool with a progress token and returns its text.
func (c *revConn) callProgress(ctx context.Context, tool string, args map[string]any, token string) (string, error) {
	res, err := c.s.Client.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{
		Name: tool, Arguments: args, Meta: &mcp.Meta{ProgressToken: token}}})
	if err != nil {
		return "", err
	}
	var parts []string
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	if res.IsError {
		return "", errors.New("tool error: " + strings.Join(parts, "\n"))
	}
	return strings.Join(parts, "\n"), nil
}

// cancelMidCall starts tool with a progress token, waits for started to
// say the server is working on it, cancels the call's context, and checks
// that the call returns at once with the cancellation.
func (c *revConn) cancelMidCall(t *testing.T, tool string, args map[string]any, token string, started func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.callProgress(ctx, tool, args, token)
		errc <- err
	}()
	testwait.For(t, 15*time.Second, "the server to start "+tool, started)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled %s returned %v, want context.Canceled", tool, err)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("cancelled %s did not return within 60s", tool)
	}
}

func wantEqual[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func wantAll(t *testing.T, what string, have []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(have, w) {
			t.Fatalf("%s: %s missing from %v", what, w, have)
		}
	}
}

// testServerCases are the features of the Go test server, each run in
// both revisions.
var testServerCases = []revCase{
	{"tools", func(t *testing.T, c *revConn) {
		wantAll(t, "tools/list", c.toolNames(t), "echo", "add", "sleep", "slow_stream", "sample", "elicit", "roots", "add_tool")
		wantEqual(t, "echo", c.text(t, "echo", map[string]any{"message": "hi " + c.rev}), "hi "+c.rev)
		wantEqual(t, "add", c.text(t, "add", map[string]any{"a": 2, "b": 3.5}), "5.5")
		// A tool error is a result, not a failure of the call.
		res, err := c.s.Client.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "error_result"}})
		if err != nil || !res.IsError {
			t.Fatalf("error_result: %+v, %v; want an isError result", res, err)
		}
	}},
	{"resources", func(t *testing.T, c *revConn) {
		ctx := context.Background()
		list, err := c.s.Client.ListResources(ctx, mcp.ListResourcesRequest{})
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
		}
		wantAll(t, "resources/list", uris, "test://static/hello.txt", "test://static/pixel.png")
		tmpls, err := c.s.Client.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
		if err != nil {
			t.Fatalf("resources/templates/list: %v", err)
		}
		var raw []string
		for _, tm := range tmpls.ResourceTemplates {
			raw = append(raw, tm.URITemplate.Raw())
		}
		wantAll(t, "resources/templates/list", raw, "test://items/{id}")

		read := func(uri string) mcp.ResourceContents {
			t.Helper()
			res, err := c.s.Client.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
			if err != nil || len(res.Contents) != 1 {
				t.Fatalf("resources/read %s: %+v, %v", uri, res, err)
			}
			return res.Contents[0]
		}
		text, ok := read("test://static/hello.txt").(mcp.TextResourceContents)
		if !ok || text.Text != "hello from hermes-testserver" || text.MIMEType != "text/plain" {
			t.Fatalf("hello.txt: %#v", text)
		}
		blob, ok := read("test://static/pixel.png").(mcp.BlobResourceContents)
		if !ok || blob.Blob == "" || blob.MIMEType != "image/png" {
			t.Fatalf("pixel.png: %#v", blob)
		}
		item, ok := read("test://items/42").(mcp.TextResourceContents)
		if !ok || item.Text != `{"id":"42"}` || item.URI != "test://items/42" {
			t.Fatalf("template item 42: %#v", item)
		}
	}},
	{"prompts", func(t *testing.T, c *revConn) {
		ctx := context.Background()
		list, err := c.s.Client.ListPrompts(ctx, mcp.ListPromptsRequest{})
		if err != nil {
			t.Fatalf("prompts/list: %v", err)
		}
		args := map[string][]string{}
		for _, p := range list.Prompts {
			for _, a := range p.Arguments {
				args[p.Name] = append(args[p.Name], a.Name)
			}
		}
		if !slices.Equal(args["greet"], []string{"name"}) || !slices.Equal(args["summarize"], []string{"text", "style"}) {
			t.Fatalf("prompt arguments %v", args)
		}
		for _, tc := range []struct {
			name string
			args map[string]string
			want string
		}{
			{"greet", map[string]string{"name": "Ada"}, "Say hello to Ada."},
			{"summarize", map[string]string{"text": "the text", "style": "long"}, "Summarize (long): the text"},
		} {
			got, err := c.s.Client.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: tc.name, Arguments: tc.args}})
			if err != nil || len(got.Messages) != 1 {
				t.Fatalf("prompts/get %s: %+v, %v", tc.name, got, err)
			}
			if m, ok := got.Messages[0].Content.(mcp.TextContent); !ok || m.Text != tc.want || got.Messages[0].Role != mcp.RoleUser {
				t.Fatalf("prompts/get %s: %#v, want user text %q", tc.name, got.Messages[0], tc.want)
			}
		}
	}},
	{"sampling", func(t *testing.T, c *revConn) {
		prompt := "hello model at " + c.rev
		// The server returns what the host's model answered.
		wantEqual(t, "sample", c.text(t, "sample", map[string]any{"prompt": prompt}), "model says: "+prompt)
		if got := c.h.sampledPrompts(); !slices.Equal(got, []string{prompt}) {
			t.Fatalf("the host's sampling handler was asked %q", got)
		}
		// Sampling with tools is declared (the handler converts them), and
		// declaring it keeps the elicitation capability the handler offers.
		caps := c.s.Client.GetClientCapabilities()
		if caps.Sampling == nil || caps.Sampling.Tools == nil {
			t.Fatalf("sampling.tools is not declared: %+v", caps.Sampling)
		}
	}},
	{"elicitation", func(t *testing.T, c *revConn) {
		msg := "ok at " + c.rev + "?"
		var got struct {
			Action  string         `json:"action"`
			Content map[string]any `json:"content"`
		}
		out := c.text(t, "elicit", map[string]any{"message": msg})
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("elicit = %q: %v", out, err)
		}
		// The server returns the host's answer.
		if got.Action != "accept" || got.Content["value"] != "yes" {
			t.Fatalf("elicit = %s, want the host's accept with value yes", out)
		}
		if asked := c.h.elicitedMessages(); !slices.Equal(asked, []string{msg}) {
			t.Fatalf("the host's elicitation handler was asked %q", asked)
		}
	}},
	{"roots", func(t *testing.T, c *revConn) {
		out := c.text(t, "roots", nil)
		var roots []mcp.Root
		if err := json.Unmarshal([]byte(out), &roots); err != nil {
			t.Fatalf("roots = %q: %v", out, err)
		}
		if len(roots) != 1 || roots[0].URI != "file:///project" || roots[0].Name != "project" {
			t.Fatalf("the server got roots %s, want the host's file:///project", out)
		}
		wantEqual(t, "roots requests", c.h.roots.Load(), 1)
	}},
	{"progress", func(t *testing.T, c *revConn) {
		token := "progress-" + c.rev
		got, err := c.callProgress(context.Background(), "slow_stream", map[string]any{"steps": 3, "interval_ms": 1}, token)
		if err != nil || got != "done" {
			t.Fatalf("slow_stream = %q, %v", got, err)
		}
		notes := c.waitProgress(t, token, 3)
		if len(notes) != 3 {
			t.Fatalf("%d progress notifications, want 3: %v", len(notes), notes)
		}
		for i, n := range notes {
			if n["progress"] != float64(i+1) || n["total"] != float64(3) {
				t.Fatalf("progress notification %d: %v", i+1, n)
			}
		}
	}},
	{"cancellation", func(t *testing.T, c *revConn) {
		c.cancelMidCall(t, "sleep", map[string]any{"ms": 600000}, "cancel-"+c.rev, func() bool {
			return waitForTrace(c.home, testserver.TraceSleepStarted, 0) // one look
		})
		// The server saw the cancellation: the sleep ended early.
		testwait.For(t, 10*time.Second, "the server to count the cancelled sleep", func() bool {
			return c.text(t, "cancelled_count", nil) == "1"
		})
		// And the session carries on.
		wantEqual(t, "echo after the cancellation", c.text(t, "echo", map[string]any{"message": "still here"}), "still here")
	}},
	{"list_changed", func(t *testing.T, c *revConn) {
		// The host opens the listen stream on every session; before
		// 2026-07-28 it is a no-op, the notifications need no opt-in.
		// (mcp-go's stdio server sends list_changed in 2026-07-28 without
		// a subscription too, so over stdio this shows the subscription is
		// acknowledged and the notification arrives, not that it needs
		// the stream; TestHTTPListChanged runs the same over HTTP.)
		ended := make(chan error, 1)
		c.s.Listen(func(err error) {
			select {
			case ended <- err:
			default:
			}
		})
		if mcp.IsModernProtocol(c.rev) {
			c.notes.waitFor(t, mcp.MethodNotificationSubscriptionsAcknowledged, 1)
			if ack := c.notes.first(mcp.MethodNotificationSubscriptionsAcknowledged); !strings.Contains(ack, `"toolsListChanged":true`) {
				t.Fatalf("the server did not subscribe the host to tools/list_changed: %s", ack)
			}
		}
		name := "fresh_" + strings.ReplaceAll(c.rev, "-", "_")
		wantEqual(t, "add_tool", c.text(t, "add_tool", map[string]any{"name": name}), "added "+name)
		c.notes.waitFor(t, mcp.MethodNotificationToolsListChanged, 1)
		wantAll(t, "tools/list after list_changed", c.toolNames(t), name)
		wantEqual(t, name, c.text(t, name, nil), name)
		select {
		case err := <-ended:
			t.Fatalf("the listen stream ended: %v", err)
		default:
		}
	}},
}

// TestRevisionsTestServer exercises every feature of the Go test server
// over stdio, through the real plugin, in the stateless revision and in
// the newest with the initialize handshake: sampling, elicitation and roots
// arrive as the server's own requests in the one, as input_required results
// mcp-go answers and re-sends (SEP-2322) in the other.
func TestRevisionsTestServer(t *testing.T) {
	t.Parallel()
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			for _, tc := range testServerCases {
				t.Run(tc.name, func(t *testing.T) {
					d, dir := deps(t)
					c := connectAt(t, d, testServer(dir, "--resources", "--prompts", "--trace"), rev)
					tc.run(t, c)
				})
			}
		})
	}
}
