package cli_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/hermes-agent/hermes/host/registry"
)

// probedRow is one tool row of the probe's listing in 'mcp add'.
var probedRow = regexp.MustCompile(`(?m)^    (\S+) +\S`)

// enabledCount is the "(N/M tools enabled)" of 'mcp add'.
var enabledCount = regexp.MustCompile(`\((\d+)/(\d+) tools enabled\)`)

// The probe of 'mcp add' lists tools through the runtime's registry, so it
// shows exactly the tools a session registers for the same entry: a server
// that pages past the registry's bound (one tool per page, more pages than
// registry.MaxListPages) is cut at the same tool, in the same order, and a
// tools filter enables the same number of tools.
func TestAddProbeSeesTheRuntimeTools(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	srv := testServerPath(t)
	paging := []string{"--tools", "60", "--page-size", "1"} // 81 tools, 81 pages

	r := runHermes(t, home, append([]string{"mcp", "add", "all", "--command", srv, "--yes", "--"}, paging...)...).must(t, 0)
	var probed []string
	for _, m := range probedRow.FindAllStringSubmatch(r.stdout, -1) {
		probed = append(probed, m[1])
	}
	if len(probed) != registry.MaxListPages {
		t.Fatalf("the probe listed %d tools, want the registry's bound of %d pages of one:\n%s", len(probed), registry.MaxListPages, r.stdout)
	}

	r = runHermes(t, home, append([]string{"mcp", "add", "some", "--command", srv, "--tools", "echo,tool_1*", "--"}, paging...)...).must(t, 0)
	m := enabledCount.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no tool count in:\n%s", r.stdout)
	}
	someEnabled, _ := strconv.Atoi(m[1])
	someTotal, _ := strconv.Atoi(m[2])

	out := runHermes(t, home, "tools", "--json", "--live").must(t, 0).stdout
	var rep struct {
		Servers []struct {
			Name, State string
			Tools       []string `json:"registered_tools"`
			Enabled     int      `json:"tools_enabled"`
			Total       int      `json:"tools_total"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Servers) != 2 {
		t.Fatalf("tools --json: %v\n%s", err, out)
	}
	all, some := rep.Servers[0], rep.Servers[1]
	want := make([]string, len(probed))
	for i, n := range probed {
		want[i] = "mcp_all_" + n
	}
	if all.State != "connected" || all.Total != len(probed) || !slices.Equal(all.Tools, want) {
		t.Errorf("the runtime registered %d of %d tools for 'all':\n%q\nthe probe showed:\n%q", len(all.Tools), all.Total, all.Tools, want)
	}
	if some.State != "connected" || some.Enabled != someEnabled || some.Total != someTotal {
		t.Errorf("the runtime enables %d/%d tools of 'some', the probe said %d/%d", some.Enabled, some.Total, someEnabled, someTotal)
	}
}
