package registry_test

import (
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
)

// A server that lists a tool twice and a tool without a name: the model is
// offered each name once (the first tool of that name) and no "mcp_ts_",
// with one warning for each, naming the server and the tool.
func TestRepeatedAndUnnamedToolsSkipped(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	m := startManager(t, registry.Options{
		Servers: []*config.Server{tsServer(dir, "ts", "--dup-tools", "--empty-tool-name")},
		Deps:    deps, Timings: fast(),
	})
	seen := map[string]int{}
	for _, d := range m.Tools() {
		seen[d.Name]++
		if d.Name == "mcp_ts_echo" && d.Description != "Returns the message verbatim." {
			t.Errorf("echo is the copy, not the first: %q", d.Description)
		}
	}
	if seen["mcp_ts_echo"] != 1 || seen["mcp_ts_add"] != 1 {
		t.Errorf("echo registered %d times, add %d times", seen["mcp_ts_echo"], seen["mcp_ts_add"])
	}
	for name, n := range seen {
		if n > 1 || name == "mcp_ts_" {
			t.Errorf("%q registered %d times", name, n)
		}
	}
	tools, _ := m.ServerTools("ts")
	names := map[string]bool{}
	for _, tl := range tools {
		if names[tl.Name] || tl.Name == "" {
			t.Errorf("ServerTools holds %q twice or unnamed", tl.Name)
		}
		names[tl.Name] = true
	}
	if st := m.Status()[0]; st.Total != len(tools) {
		t.Errorf("status counts %d tools, the listing has %d", st.Total, len(tools))
	}
	mustCall(t, m, "mcp_ts_echo", map[string]any{"message": "hi"})

	l := logs.String()
	for _, want := range []string{
		"MCP server 'ts': tool 'echo' is listed 2 times; only the first is used",
		"MCP server 'ts': 1 tool(s) without a name skipped",
	} {
		if n := strings.Count(l, want); n != 1 {
			t.Errorf("warning %q logged %d times:\n%s", want, n, l)
		}
	}
}
