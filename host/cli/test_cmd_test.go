package cli_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testnpm"
)

// mcp test lists every tool of the server and says which ones the tools
// filter hides from the model; unknown keys are reported.
func TestMCPTestShowsFilterAndUnknownKeys(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  ts:\n    command: "+testbin.Path(t, "hermes-testserver")+
		"\n    frobnicate: 3\n    tools:\n      include: [echo, \"ad?\"]\n")
	r := runHermes(t, home, "mcp", "test", "ts", "--json").must(t, 0)
	var rep struct {
		State       string   `json:"state"`
		UnknownKeys []string `json:"unknown_keys"`
		Tools       []struct {
			Name    string `json:"name"`
			Enabled bool   `json:"enabled"`
		} `json:"discovered_tools"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	var enabled []string
	for _, tl := range rep.Tools {
		if tl.Enabled {
			enabled = append(enabled, tl.Name)
		}
	}
	if rep.State != "connected" || len(rep.Tools) < 10 || strings.Join(enabled, ",") != "add,echo" {
		t.Fatalf("state=%v tools=%d enabled=%v", rep.State, len(rep.Tools), enabled)
	}
	if len(rep.UnknownKeys) != 1 || rep.UnknownKeys[0] != "frobnicate" {
		t.Fatalf("unknown keys %v", rep.UnknownKeys)
	}
	text := runHermes(t, home, "mcp", "test", "ts").must(t, 0).stdout
	if !strings.Contains(text, "(2 enabled by the tools filter)") || !strings.Contains(text, "(filtered out)") || !strings.Contains(text, "unknown key 'frobnicate'") {
		t.Fatalf("text report:\n%s", text)
	}
}

// mcp test counts the resource templates (resources/templates/list) beside
// the resources, in its text and its --json, for the Go test server and
// server-everything; a server without resources has neither.
func TestMCPTestCountsResourceTemplates(t *testing.T) {
	t.Parallel()
	node, script := testnpm.Server(t, "@modelcontextprotocol/server-everything")
	home := newHome(t)
	ts := testbin.Path(t, "hermes-testserver")
	writeConfig(t, home, "mcp_servers:\n  ts:\n    command: "+ts+"\n    args: [--resources]\n  plain:\n    command: "+ts+
		"\n  ev:\n    command: "+node+"\n    args: ["+script+", stdio]\n")
	report := func(name string) (text string, rep map[string]any) {
		text = runHermes(t, home, "mcp", "test", name).must(t, 0).stdout
		out := runHermes(t, home, "mcp", "test", name, "--json").must(t, 0).stdout
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return text, rep
	}
	text, rep := report("ts")
	if !strings.Contains(text, "resources: 2, resource templates: 1") || rep["resource_templates"] != 1.0 {
		t.Errorf("ts: resource_templates=%v\n%s", rep["resource_templates"], text)
	}
	text, rep = report("ev")
	if n, _ := rep["resource_templates"].(float64); n < 1 || !strings.Contains(text, "resource templates: ") {
		t.Errorf("server-everything: resource_templates=%v\n%s", rep["resource_templates"], text)
	}
	// Its instructions, a manual of many lines, are cut to a few on the
	// terminal and said to be (they buried the report); --json has them.
	instr, _ := rep["instructions"].(string)
	if lines := strings.Count(instr, "\n") + 1; lines <= 6 || !strings.Contains(text, fmt.Sprintf("… %d more lines (hermes mcp test ev --json shows them all)", lines-6)) {
		t.Errorf("server-everything's %d lines of instructions are not cut to 6:\n%s", lines, text)
	}
	text, rep = report("plain")
	if _, ok := rep["resource_templates"]; ok || strings.Contains(text, "resource templates") {
		t.Errorf("a server without resources shows templates: %v\n%s", rep["resource_templates"], text)
	}
}
