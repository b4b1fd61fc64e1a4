package session_test

import (
	"context"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testnpm"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/mark3labs/mcp-go/mcp"
)

// noteLog collects notifications.
type noteLog struct {
	mu    sync.Mutex
	notes []mcpvalue.Notification
}

func (l *noteLog) add(_ string, n mcpvalue.Notification) {
	l.mu.Lock()
	l.notes = append(l.notes, n)
	l.mu.Unlock()
}

func (l *noteLog) count(method string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, x := range l.notes {
		if x.Method == method {
			n++
		}
	}
	return n
}

func (l *noteLog) waitFor(t *testing.T, method string, n int) {
	t.Helper()
	if !testwait.Until(10*time.Second, func() bool { return l.count(method) >= n }) {
		t.Fatalf("got %d %s notifications, want %d", l.count(method), method, n)
	}
}

func TestEverythingStreamableHTTP(t *testing.T) { testEverything(t, "streamableHttp", "http", "/mcp") }

func TestEverythingSSE(t *testing.T) { testEverything(t, "sse", "sse", "/sse") }

func testEverything(t *testing.T, mode, transport, path string) {
	node, script := testnpm.Server(t, "@modelcontextprotocol/server-everything")
	d, _ := deps(t)
	h := &handlers{}
	notes := &noteLog{}
	d.Sampling, d.Elicitation, d.Roots = h, h, h
	d.OnNotification = notes.add
	port := itoa(freePort(t))
	cmd := exec.Command(node, script, mode)
	cmd.Env = append(os.Environ(), "PORT="+port)
	startListening(t, cmd, "port "+port)
	s := mustConnect(t, remote(transport, "http://127.0.0.1:"+port+path), d)
	if s.Init.ServerInfo.Name != "mcp-servers/everything" {
		t.Fatalf("server %q", s.Init.ServerInfo.Name)
	}
	// The stateful TypeScript server refuses server/discover at once (HTTP
	// 400, a JSON-RPC error whose id is null): that refusal ends the probe,
	// which does not wait out its bound.
	if mode == "streamableHttp" && (!strings.Contains(s.Protocol.Why, "(server/discover: Bad Request: ") || strings.Contains(s.Protocol.Why, "deadline")) {
		t.Fatalf("protocol %+v: want the server's refusal as the end of the discover probe", s.Protocol)
	}
	ctx := context.Background()

	// Tools added after initialize (they depend on the client's
	// capabilities) are announced with list_changed.
	notes.waitFor(t, mcp.MethodNotificationToolsListChanged, 1)
	tools, err := s.Client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"echo", "get-sum", "trigger-long-running-operation", "trigger-sampling-request", "trigger-elicitation-request"} {
		if !names[want] {
			t.Fatalf("tool %s missing from %v", want, names)
		}
	}
	if got := callText(t, s, "echo", map[string]any{"message": "hello"}); got != "Echo: hello" {
		t.Fatalf("echo = %q", got)
	}
	if got := callText(t, s, "get-sum", map[string]any{"a": 2, "b": 3}); !strings.Contains(got, "5") {
		t.Fatalf("get-sum = %q", got)
	}

	res, err := s.Client.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil || len(res.Resources) == 0 {
		t.Fatalf("resources: %v, %v", res, err)
	}
	read, err := s.Client.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: res.Resources[0].URI}})
	if err != nil || len(read.Contents) == 0 {
		t.Fatalf("read %s: %v, %v", res.Resources[0].URI, read, err)
	}

	prompts, err := s.Client.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil || len(prompts.Prompts) == 0 {
		t.Fatalf("prompts: %v, %v", prompts, err)
	}
	p, err := s.Client.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "args-prompt", Arguments: map[string]string{"city": "Paris"}}})
	if err != nil || len(p.Messages) == 0 {
		t.Fatalf("args-prompt: %v, %v", p, err)
	}

	// Progress notifications travel on the call's own stream.
	req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "trigger-long-running-operation",
		Arguments: map[string]any{"duration": 1, "steps": 3}, Meta: &mcp.Meta{ProgressToken: "p1"}}}
	if _, err := s.Client.CallTool(ctx, req); err != nil {
		t.Fatal(err)
	}
	notes.waitFor(t, string(mcp.MethodNotificationProgress), 3)

	if got := callText(t, s, "trigger-sampling-request", map[string]any{"prompt": "ping"}); !strings.Contains(got, "model says:") {
		t.Fatalf("sampling = %q", got)
	}
	if got := callText(t, s, "trigger-elicitation-request", map[string]any{}); !strings.Contains(got, "accept") {
		t.Fatalf("elicitation = %q", got)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.sampled) != 1 || len(h.elicited) != 1 {
		t.Fatalf("handlers saw %d sampling and %d elicitation requests", len(h.sampled), len(h.elicited))
	}
}
