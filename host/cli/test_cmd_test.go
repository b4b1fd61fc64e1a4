package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
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
