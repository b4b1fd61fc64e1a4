package registry_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/sdk/logfile"
)

// A server flooding its stderr cannot flood mcp-stderr.log: the stdio
// plugin rate-limits its lines and says how many it dropped.
func TestServerStderrFloodIsRateLimited(t *testing.T) {
	deps, dir, _ := liveEnv(t)
	m := startManager(t, registry.Options{Servers: []*config.Server{tsServer(dir, "noisy")}, Deps: deps, Timings: fast()})
	mustCall(t, m, "mcp_noisy_stderr", map[string]any{"lines": 20 * logfile.DefaultBurst})
	m.Close()
	b, err := os.ReadFile(filepath.Join(deps.Home, "logs", "mcp-stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 2*logfile.DefaultBurst {
		t.Errorf("%d lines after the flood of %d", n, 20*logfile.DefaultBurst)
	}
	if !strings.Contains(string(b), "lines from MCP server 'noisy' dropped") {
		t.Errorf("dropped lines not counted:\n%s", tail(string(b)))
	}
}

func tail(s string) string {
	if len(s) > 600 {
		return s[len(s)-600:]
	}
	return s
}
