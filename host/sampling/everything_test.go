package sampling_test

import (
	"context"
	"encoding/json"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/sampling"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testmodel"
	"github.com/hermes-agent/hermes/internal/testnpm"
)

// everything is a server-everything entry with the given sampling: block.
func everything(t *testing.T, name string, block map[string]any) *config.Server {
	node, script := testnpm.Server(t, "@modelcontextprotocol/server-everything")
	return &config.Server{
		Name: name, Transport: "stdio", Command: node, Args: []string{script, "stdio"},
		Enabled: true, ConnectTimeout: 60 * time.Second, Timeout: 60 * time.Second,
		KeepaliveInterval: config.DefaultKeepaliveInterval, MaxServerRequests: config.DefaultMaxServerRequests,
		Sampling: block,
	}
}

// liveRegistry starts a registry over servers whose sampling requests go
// through h, with the freshly built stdio transport plugin.
func liveRegistry(t *testing.T, h *sampling.Host, servers ...*config.Server) *registry.Manager {
	t.Helper()
	testbin.Path(t, "hermes-transport-stdio")
	t.Setenv("HERMES_PLUGIN_PATH", testbin.Dir(t))
	home := t.TempDir()
	logger := hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Warn, Output: testWriter{t}})
	sup := supervisor.New(supervisor.Options{Home: home, Logger: logger})
	t.Cleanup(sup.KillAll)
	m := registry.New(registry.Options{
		Servers: servers,
		Deps:    session.Deps{Home: home, Supervisor: sup, Logger: logger},
		Requests: func(srv *config.Server) registry.Requests {
			var q registry.Requests
			if hd := h.Handler(srv); hd != nil {
				q.Sampling = hd
			}
			return q
		},
	})
	t.Cleanup(func() { m.Close() })
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func resultText(t *testing.T, res mcpvalue.CallResult, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if c.Type == mcpvalue.TypeText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// server-everything's trigger-sampling-request is answered by the scripted
// model with the server's policy applied: the caps are in the request the
// model receives, and max_rpm and max_tool_rounds stop what is over.
func TestEverythingSampling(t *testing.T) {
	srv := testmodel.New(t)
	h, home := newHost(t, srv)
	m := liveRegistry(t, h,
		everything(t, "everything", map[string]any{"max_tokens_cap": 40, "max_rpm": 2}),
		everything(t, "loop", map[string]any{"max_tool_rounds": 1}),
		everything(t, "off", map[string]any{"enabled": false}),
	)
	ctx := context.Background()
	args := map[string]any{"prompt": "hello there", "maxTokens": 1000}
	call := func(server string) string {
		raw, _ := json.Marshal(args)
		res, err := m.CallTool(ctx, server, "trigger-sampling-request", raw)
		return resultText(t, res, err)
	}

	srv.Script(testmodel.Reply{Text: "sampled by the script", PromptTokens: 10, CompletionTokens: 3})
	got := call("everything")
	if !strings.Contains(got, "sampled by the script") || !strings.Contains(got, `"stopReason": "endTurn"`) {
		t.Fatalf("result %s", got)
	}
	req := srv.Last(t)
	if req.MaxTokens() != 40 || req.Body["temperature"] != 0.7 || req.Model() != "default-model" {
		t.Errorf("the policy's caps are not in the request: %s", req.Raw)
	}
	msgs := req.Messages()
	if len(msgs) != 2 || msgs[0]["content"] != "You are a helpful test server." || !strings.Contains(msgs[1]["content"].(string), "hello there") {
		t.Errorf("messages %v", msgs)
	}

	// max_rpm 2: the third request within the minute is refused.
	call("everything")
	got = call("everything")
	// The server receives the refusal with code -1, as from the original
	// host (REFERENCE.md §6); the TypeScript SDK shows it in its message.
	if !strings.Contains(got, "MCP error -1: Sampling rate limit exceeded for server 'everything' (2 requests/minute)") {
		t.Errorf("third request: %s", got)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("the model received %d requests, want 2", n)
	}
	if mt := h.Metrics("everything"); mt.Requests != 3 || mt.Errors != 1 || mt.TokensUsed != 13 {
		t.Errorf("metrics %+v", mt)
	}
	if mt := sampling.LoadMetrics(home)["everything"]; mt.Requests != 3 || mt.Errors != 1 {
		t.Errorf("saved metrics %+v", mt)
	}

	// max_tool_rounds 1: a second tool_use answer in a row is refused.
	tool := testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"q":"x"}`}}}
	srv.Script(tool, tool)
	got = call("loop")
	if strings.Contains(got, "Tool loop") {
		t.Fatalf("first round refused: %s", got)
	}
	got = call("loop")
	if !strings.Contains(got, "Tool loop limit exceeded for server 'loop' (max 1 rounds)") {
		t.Errorf("second round: %s", got)
	}

	// enabled: false: the capability is not offered, so server-everything
	// does not even offer its sampling tool.
	tools, _ := m.ServerTools("off")
	names := make([]string, len(tools))
	for i, tl := range tools {
		names[i] = tl.Name
	}
	if len(names) == 0 || slices.Contains(names, "trigger-sampling-request") {
		t.Errorf("tools of the disabled server: %v", names)
	}
	everythingTools, _ := m.ServerTools("everything")
	if !slices.ContainsFunc(everythingTools, func(tl mcpvalue.Tool) bool { return tl.Name == "trigger-sampling-request" }) {
		t.Errorf("the enabled server lacks trigger-sampling-request")
	}
}
