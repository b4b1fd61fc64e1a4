package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// mcp test shows the protocol revision in use and why: negotiated the
// first time, remembered the next (without a new probe), pinned by the
// protocol key.
func TestMCPTestShowsProtocol(t *testing.T) {
	t.Parallel()
	home := hostileStdio(t, "--protocols", "2025-11-25,2025-06-18")
	r := runHermes(t, home, "mcp", "test", "ts").must(t, 0)
	want := "Protocol: 2025-11-25 (the server does not speak 2026-07-28 (server/discover: Method not found (-32601)); it chose 2025-11-25 in initialize)"
	if !strings.Contains(r.stdout, want) {
		t.Fatalf("first mcp test lacks %q:\n%s", want, r.stdout)
	}
	r = runHermes(t, home, "mcp", "test", "ts", "--json").must(t, 0)
	var rep struct {
		Version string `json:"protocol_version"`
		Source  string `json:"protocol_source"`
		Why     string `json:"protocol_why"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if rep.Version != "2025-11-25" || rep.Source != "remembered" || !strings.Contains(rep.Why, "remembered from the last connection") {
		t.Fatalf("second mcp test: %+v", rep)
	}

	home = hostileStdio(t)
	writeConfig(t, home, strings.Replace(readConfig(t, home), "    args: []\n", "    args: []\n    protocol: 2025-06-18\n", 1))
	r = runHermes(t, home, "mcp", "test", "ts").must(t, 0)
	if want := "Protocol: 2025-06-18 (pinned by the protocol key of the server's entry)"; !strings.Contains(r.stdout, want) {
		t.Fatalf("pinned: mcp test lacks %q:\n%s", want, r.stdout)
	}
}
