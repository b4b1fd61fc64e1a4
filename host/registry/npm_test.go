package registry_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/internal/testnpm"
)

func npmEntry(name, node, script string, args ...string) *config.Server {
	return &config.Server{
		Name: name, Transport: "stdio", Command: node, Args: append([]string{script}, args...),
		Enabled: true, ConnectTimeout: 30 * time.Second, Timeout: 30 * time.Second,
		KeepaliveInterval: config.DefaultKeepaliveInterval,
		Tools:             config.ToolsFilter{Resources: true, Prompts: true},
	}
}

// Every content type rendered through Manager.Call, plus names, filters and
// utilities, against the official server-everything.
func TestEverythingServer(t *testing.T) {
	t.Parallel()
	node, script := testnpm.Server(t, "@modelcontextprotocol/server-everything")
	deps, _, _ := liveEnv(t)
	srv := npmEntry("everything", node, script, "stdio")
	srv.Tools.Exclude = []string{"echo", "trigger-*"}
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
	if st := status(m, "everything"); st.State != registry.StateConnected {
		t.Fatalf("status %+v", st)
	}
	got := names(m.Tools())
	hasAll(t, got, "mcp_everything_get_sum", "mcp_everything_get_tiny_image", "mcp_everything_get_resource_links",
		"mcp_everything_get_resource_reference", "mcp_everything_get_structured_content",
		"mcp_everything_list_resources", "mcp_everything_read_resource", "mcp_everything_list_prompts", "mcp_everything_get_prompt")
	hasNone(t, got, "mcp_everything_echo", "mcp_everything_trigger_long_running_operation")
	if ce := callErr(t, m, "mcp_everything_echo", map[string]any{"message": "x"}); !strings.Contains(ce.Msg, "filtered") {
		t.Errorf("excluded echo: %+v", ce)
	}
	if ce := callErr(t, m, "mcp_everything_trigger_long_running_operation", nil); !strings.Contains(ce.Msg, "filtered") {
		t.Errorf("glob-excluded tool: %+v", ce)
	}

	if r := mustCall(t, m, "mcp_everything_get_sum", map[string]any{"a": 2, "b": 3}); !strings.Contains(r["result"].(string), "5") {
		t.Errorf("get-sum = %v", r)
	}
	// Image -> MEDIA:<path> of a file in the cache.
	r := mustCall(t, m, "mcp_everything_get_tiny_image", nil)
	text, _ := r["result"].(string)
	i := strings.Index(text, "MEDIA:")
	if i < 0 {
		t.Fatalf("get-tiny-image = %v", r)
	}
	path := strings.Fields(text[i+len("MEDIA:"):])[0]
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 || !strings.HasPrefix(path, filepath.Join(deps.Home, "cache")) {
		t.Errorf("image file %s: %v", path, err)
	}
	// Resource links described with the read_resource hint.
	r = mustCall(t, m, "mcp_everything_get_resource_links", map[string]any{"count": 2})
	if s := r["result"].(string); strings.Count(s, "[MCP resource link: uri=") != 2 || !strings.Contains(s, "mcp_everything_read_resource") {
		t.Errorf("get-resource-links = %s", s)
	}
	// Embedded text resource inlined; embedded blob saved.
	r = mustCall(t, m, "mcp_everything_get_resource_reference", map[string]any{"resourceType": "Text", "resourceId": 2})
	if s := r["result"].(string); s == "" || strings.Contains(s, "[MCP resource saved") {
		t.Errorf("text resource reference = %s", s)
	}
	r = mustCall(t, m, "mcp_everything_get_resource_reference", map[string]any{"resourceType": "Blob", "resourceId": 3})
	if s := r["result"].(string); !strings.Contains(s, "[MCP resource saved to ") {
		t.Errorf("blob resource reference = %s", s)
	}
	// Structured content alongside the text.
	r = mustCall(t, m, "mcp_everything_get_structured_content", map[string]any{"location": "Chicago"})
	sc, ok := r["structuredContent"].(map[string]any)
	if !ok || sc["temperature"] == nil {
		t.Errorf("get-structured-content = %v", r)
	}

	// Utilities.
	r = mustCall(t, m, "mcp_everything_list_prompts", nil)
	if !strings.Contains(toJSON(r), "simple-prompt") {
		t.Errorf("list_prompts = %v", r)
	}
	r = mustCall(t, m, "mcp_everything_get_prompt", map[string]any{"name": "simple-prompt"})
	if msgs, _ := r["messages"].([]any); len(msgs) == 0 {
		t.Errorf("get_prompt = %v", r)
	}
	r = mustCall(t, m, "mcp_everything_list_resources", nil)
	res, _ := r["resources"].([]any)
	if len(res) == 0 {
		t.Fatalf("list_resources = %v", r)
	}
	// server-everything has resource templates: listed beside the resources.
	tm, _ := r["resourceTemplates"].([]any)
	if len(tm) == 0 || !strings.Contains(toJSON(tm[0]), `"uriTemplate":"`) {
		t.Errorf("list_resources lists no resource templates: %v", r)
	}
	uri := res[0].(map[string]any)["uri"].(string)
	if r := mustCall(t, m, "mcp_everything_read_resource", map[string]any{"uri": uri}); r["result"] == "" {
		t.Errorf("read_resource %s = %v", uri, r)
	}
	if out, err := call(m, context.Background(), "mcp_everything_read_resource", map[string]any{}); err == nil || !strings.Contains(out, "Missing required parameter 'uri'") {
		t.Errorf("read_resource without uri = %s", out)
	}
}

// server-filesystem: tools listed and called, a filtered tool refused, no
// prompt utilities (no prompts capability).
func TestFilesystemServer(t *testing.T) {
	t.Parallel()
	node, script := testnpm.Server(t, "@modelcontextprotocol/server-filesystem")
	deps, _, _ := liveEnv(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from disk"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := npmEntry("fs", node, script, root)
	srv.Tools.Exclude = []string{"write_file", "edit_file", "move_file", "create_directory"}
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
	got := names(m.Tools())
	hasAll(t, got, "mcp_fs_list_directory", "mcp_fs_read_text_file")
	hasNone(t, got, "mcp_fs_write_file", "mcp_fs_list_prompts", "mcp_fs_get_prompt")
	r := mustCall(t, m, "mcp_fs_list_directory", map[string]any{"path": root})
	if !strings.Contains(r["result"].(string), "hello.txt") {
		t.Errorf("list_directory = %v", r)
	}
	r = mustCall(t, m, "mcp_fs_read_text_file", map[string]any{"path": filepath.Join(root, "hello.txt")})
	if !strings.Contains(toJSON(r), "hello from disk") {
		t.Errorf("read_text_file = %v", r)
	}
	ce := callErr(t, m, "mcp_fs_write_file", map[string]any{"path": filepath.Join(root, "x"), "content": "x"})
	if ce.Code != failure.CodeFiltered || !strings.Contains(ce.Msg, "filtered by tools.include/exclude of server fs") {
		t.Errorf("write_file: %+v", ce)
	}
	if _, err := os.Stat(filepath.Join(root, "x")); err == nil {
		t.Error("a filtered tool ran")
	}
}
