package session_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/internal/testnpm"
	"github.com/mark3labs/mcp-go/mcp"
)

// The official server-everything over stdio, through the real plugin: list
// tools, call echo and get-sum, read a resource, get a prompt.
func TestServerEverythingStdio(t *testing.T) {
	t.Parallel()
	node, script := testnpm.Server(t, "@modelcontextprotocol/server-everything")
	d, _ := deps(t)
	srv := &config.Server{Name: "everything", Transport: "stdio", Command: node,
		Args: []string{script, "stdio"}, Enabled: true,
		ConnectTimeout: 30 * time.Second, Timeout: 30 * time.Second}
	s := connect(t, d, srv)
	ctx := context.Background()

	tools, err := s.Client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, tl := range tools.Tools {
		have[tl.Name] = true
	}
	for _, want := range []string{"echo", "get-sum", "get-env"} {
		if !have[want] {
			t.Errorf("tool %s missing from %v", want, have)
		}
	}
	if got, err := call(ctx, s, "echo", map[string]any{"message": "hello"}); err != nil || got != "Echo: hello" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	if got, err := call(ctx, s, "get-sum", map[string]any{"a": 2, "b": 3}); err != nil || !strings.Contains(got, "5") {
		t.Fatalf("get-sum = %q, %v", got, err)
	}
	// A host secret does not reach a real server's environment (the host
	// environment given through Deps.Environ, so the test runs in parallel;
	// TestSafeEnvironment covers the process's).
	d2 := d
	d2.Environ = append(os.Environ(), "HERMES_HOST_SECRET_FOR_TEST=do-not-leak")
	s2 := connect(t, d2, srv)
	if got, err := call(ctx, s2, "get-env", map[string]any{}); err != nil || strings.Contains(got, "do-not-leak") || !strings.Contains(got, "PATH") {
		t.Fatalf("get-env leaked or failed: %v\n%s", err, got)
	}

	res, err := s.Client.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil || len(res.Resources) == 0 {
		t.Fatalf("resources: %v, %v", res, err)
	}
	read, err := s.Client.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: res.Resources[0].URI}})
	if err != nil || len(read.Contents) == 0 {
		t.Fatalf("read %s: %v", res.Resources[0].URI, err)
	}
	prompts, err := s.Client.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil || len(prompts.Prompts) == 0 {
		t.Fatalf("prompts: %v", err)
	}
	var name string
	for _, p := range prompts.Prompts {
		if len(p.Arguments) == 0 {
			name = p.Name
		}
	}
	if name == "" {
		t.Fatalf("no argument-less prompt in %v", prompts.Prompts)
	}
	got, err := s.Client.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: name}})
	if err != nil || len(got.Messages) == 0 {
		t.Fatalf("get prompt %s: %v", name, err)
	}
}
