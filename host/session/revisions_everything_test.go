package session_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/internal/testnpm"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/mark3labs/mcp-go/mcp"
)

// everythingRevisions are the revisions server-everything (TypeScript SDK
// 1.x) answers initialize with when asked: it knows no 2026-07-28.
var everythingRevisions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// everythingStdio is the entry of @modelcontextprotocol/server-everything
// over stdio. It fails, never skips, under CI=true when the package is not
// installed (testnpm).
func everythingStdio(t *testing.T) *config.Server {
	t.Helper()
	node, script := testnpm.Server(t, "@modelcontextprotocol/server-everything")
	return &config.Server{Name: "everything", Transport: "stdio", Command: node,
		Args: []string{script, "stdio"}, Enabled: true,
		ConnectTimeout: 30 * time.Second, Timeout: 30 * time.Second}
}

// everythingTools waits until server-everything lists the tools it adds
// once it knows the client's capabilities (after initialized), and returns
// every tool name.
func everythingTools(t *testing.T, c *revConn) []string {
	t.Helper()
	var names []string
	testwait.For(t, 10*time.Second, "server-everything to list its sampling, elicitation and roots tools", func() bool {
		names = c.toolNames(t)
		return slices.Contains(names, "trigger-sampling-request") &&
			slices.Contains(names, "trigger-elicitation-request") &&
			slices.Contains(names, "get-roots-list")
	})
	return names
}

// everythingCases are the features of server-everything, each run in every
// legacy revision it speaks, one after the other on one session (the
// server takes seconds to start): cancellation comes last, as the
// operation it cancels runs on in the server.
var everythingCases = []revCase{
	{"tools", func(t *testing.T, c *revConn) {
		wantAll(t, "tools/list", everythingTools(t, c), "echo", "get-sum", "trigger-long-running-operation")
		wantEqual(t, "echo", c.text(t, "echo", map[string]any{"message": "hello " + c.rev}), "Echo: hello "+c.rev)
		if got := c.text(t, "get-sum", map[string]any{"a": 2, "b": 3}); !strings.Contains(got, "5") {
			t.Fatalf("get-sum = %q", got)
		}
	}},
	{"resources", func(t *testing.T, c *revConn) {
		ctx := context.Background()
		list, err := c.s.Client.ListResources(ctx, mcp.ListResourcesRequest{})
		if err != nil || len(list.Resources) == 0 {
			t.Fatalf("resources/list: %+v, %v", list, err)
		}
		tmpls, err := c.s.Client.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
		if err != nil {
			t.Fatalf("resources/templates/list: %v", err)
		}
		var raw []string
		for _, tm := range tmpls.ResourceTemplates {
			raw = append(raw, tm.URITemplate.Raw())
		}
		wantAll(t, "resources/templates/list", raw, "demo://resource/dynamic/text/{resourceId}", "demo://resource/dynamic/blob/{resourceId}")
		read := func(uri string) mcp.ResourceContents {
			t.Helper()
			res, err := c.s.Client.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
			if err != nil || len(res.Contents) == 0 {
				t.Fatalf("resources/read %s: %+v, %v", uri, res, err)
			}
			return res.Contents[0]
		}
		if text, ok := read("demo://resource/dynamic/text/7").(mcp.TextResourceContents); !ok || !strings.HasPrefix(text.Text, "Resource 7:") {
			t.Fatalf("dynamic text 7: %#v", text)
		}
		if blob, ok := read("demo://resource/dynamic/blob/7").(mcp.BlobResourceContents); !ok || blob.Blob == "" {
			t.Fatalf("dynamic blob 7: %#v", blob)
		}
		read(list.Resources[0].URI)
	}},
	{"prompts", func(t *testing.T, c *revConn) {
		ctx := context.Background()
		list, err := c.s.Client.ListPrompts(ctx, mcp.ListPromptsRequest{})
		if err != nil {
			t.Fatalf("prompts/list: %v", err)
		}
		var names []string
		for _, p := range list.Prompts {
			names = append(names, p.Name)
		}
		wantAll(t, "prompts/list", names, "simple-prompt", "args-prompt")
		got, err := c.s.Client.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{
			Name: "args-prompt", Arguments: map[string]string{"city": "Paris", "state": "Texas"}}})
		if err != nil || len(got.Messages) != 1 {
			t.Fatalf("prompts/get args-prompt: %+v, %v", got, err)
		}
		if m, ok := got.Messages[0].Content.(mcp.TextContent); !ok || m.Text != "What's weather in Paris, Texas?" {
			t.Fatalf("args-prompt: %#v", got.Messages[0])
		}
	}},
	{"sampling", func(t *testing.T, c *revConn) {
		everythingTools(t, c)
		before := len(c.h.sampledPrompts())
		prompt := "Resource trigger-sampling-request context: ping at " + c.rev
		got := c.text(t, "trigger-sampling-request", map[string]any{"prompt": "ping at " + c.rev})
		// The server returns what the host's model answered.
		if !strings.Contains(got, `"text": "model says: `+prompt+`"`) || !strings.Contains(got, `"model": "test-model"`) {
			t.Fatalf("trigger-sampling-request = %q", got)
		}
		if asked := c.h.sampledPrompts()[before:]; !slices.Equal(asked, []string{prompt}) {
			t.Fatalf("the host's sampling handler was asked %q", asked)
		}
	}},
	{"elicitation", func(t *testing.T, c *revConn) {
		everythingTools(t, c)
		before := len(c.h.elicitedMessages())
		got := c.text(t, "trigger-elicitation-request", map[string]any{})
		// The server returns the host's answers.
		for _, want := range []string{"User provided the requested information", "- Name: yes", "- Email: someone@example.com", "- Favorite Integer: 42"} {
			if !strings.Contains(got, want) {
				t.Fatalf("trigger-elicitation-request lacks %q:\n%s", want, got)
			}
		}
		if asked := c.h.elicitedMessages()[before:]; !slices.Equal(asked, []string{"Please provide inputs for the following fields:"}) {
			t.Fatalf("the host's elicitation handler was asked %q", asked)
		}
	}},
	{"roots", func(t *testing.T, c *revConn) {
		everythingTools(t, c)
		got := c.text(t, "get-roots-list", map[string]any{})
		if !strings.Contains(got, "Current MCP Roots (1 total)") || !strings.Contains(got, "URI: file:///project") {
			t.Fatalf("get-roots-list = %q, want the host's file:///project", got)
		}
		// The server asks once per session, on its own after initialized
		// or for the tool, whichever comes first (maybe both).
		if n := c.h.roots.Load(); n < 1 || n > 2 {
			t.Fatalf("the host's roots handler was asked %d times", n)
		}
	}},
	{"progress", func(t *testing.T, c *revConn) {
		token := "progress-" + c.rev
		got, err := c.callProgress(context.Background(), "trigger-long-running-operation", map[string]any{"duration": 0.03, "steps": 3}, token)
		if err != nil || !strings.Contains(got, "Long running operation completed") {
			t.Fatalf("trigger-long-running-operation = %q, %v", got, err)
		}
		notes := c.waitProgress(t, token, 3)
		for i, n := range notes {
			if n["progress"] != float64(i+1) || n["total"] != float64(3) {
				t.Fatalf("progress notification %d: %v", i+1, n)
			}
		}
	}},
	{"cancellation", func(t *testing.T, c *revConn) {
		// A 60s operation reporting progress every 100ms: its first
		// progress notification says the server is working on it.
		token := "cancel-" + c.rev
		c.cancelMidCall(t, "trigger-long-running-operation", map[string]any{"duration": 60, "steps": 600}, token, func() bool {
			return len(c.progressOf(token)) > 0
		})
		// server-everything offers no sign that it saw the cancellation
		// (the operation does not watch its abort signal): the session
		// carries on.
		wantEqual(t, "echo after the cancellation", c.text(t, "echo", map[string]any{"message": "still here"}), "Echo: still here")
	}},
}

// TestRevisionsEverything exercises server-everything over stdio, through
// the real plugin, in each legacy revision it speaks.
func TestRevisionsEverything(t *testing.T) {
	t.Parallel()
	everythingStdio(t)
	for _, rev := range everythingRevisions {
		t.Run(rev, func(t *testing.T) {
			d, _ := deps(t)
			c := connectAt(t, d, everythingStdio(t), rev)
			if c.s.Init.ServerInfo.Name != "mcp-servers/everything" {
				t.Fatalf("server %q", c.s.Init.ServerInfo.Name)
			}
			for _, tc := range everythingCases {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, c) })
			}
		})
	}
}

// TestRevisionsEverythingNegotiation: server-everything knows no
// server/discover, so negotiation falls back to initialize and says why;
// pinned to 2026-07-28 it is refused with what it answered.
func TestRevisionsEverythingNegotiation(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"", config.ProtocolAuto} {
		t.Run("protocol="+proto, func(t *testing.T) {
			d, _ := deps(t)
			srv := everythingStdio(t)
			srv.Protocol = proto
			s := connect(t, d, srv)
			p := s.Protocol
			if p.Revision != "2025-11-25" || p.Source != session.SourceNegotiated || s.Init.ProtocolVersion != "2025-11-25" {
				t.Fatalf("protocol %+v (initialize says %s), want 2025-11-25 negotiated", p, s.Init.ProtocolVersion)
			}
			if !strings.Contains(p.Why, "does not speak "+session.Latest) || !strings.Contains(p.Why, "chose 2025-11-25") {
				t.Fatalf("Why = %q, want that the server does not speak %s", p.Why, session.Latest)
			}
			t.Logf("Why: %s", p.Why)
			wantEqual(t, "echo", callText(t, s, "echo", map[string]any{"message": "auto"}), "Echo: auto")
		})
	}
	t.Run("pinned "+session.Latest, func(t *testing.T) {
		d, _ := deps(t)
		srv := everythingStdio(t)
		srv.Protocol = session.Latest
		_, err := connectOnce(srv, d)
		var ce *session.ConnectError
		if !errors.As(err, &ce) || ce.Code() != "config" {
			t.Fatalf("want a config error, got %v", err)
		}
		for _, want := range []string{"does not speak the pinned protocol " + session.Latest, "it answered with 2025-11-25", "protocol: auto"} {
			if !strings.Contains(ce.Error(), want) {
				t.Fatalf("message %q lacks %q", ce.Error(), want)
			}
		}
		t.Logf("pinned %s: %s", session.Latest, ce.Error())
	})
}
