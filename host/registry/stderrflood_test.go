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
	t.Parallel()
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

// log_burst and log_lines_per_second reach the stdio plugin: with a burst
// of 100 and one line a second, a flood of 5000 stderr lines leaves about
// 100 in mcp-stderr.log, and the note about the rest names both keys.
func TestServerStderrLogLimitKeys(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	srv := tsServer(dir, "noisy")
	srv.LogLinesPerSecond, srv.LogBurst = 1, 100
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
	mustCall(t, m, "mcp_noisy_stderr", map[string]any{"lines": 5000})
	m.Close()
	b, err := os.ReadFile(filepath.Join(deps.Home, "logs", "mcp-stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	// The burst, plus one a second for as long as the flood lasted on a
	// busy machine.
	if n := strings.Count(string(b), "noise line"); n < 100 || n > 1000 {
		t.Errorf("%d noise lines of 5000 in the log, want about log_burst's 100", n)
	}
	if !strings.Contains(string(b), "lines from MCP server 'noisy' dropped: more than 1 lines a second; raise log_lines_per_second or log_burst in its entry in config.yaml") {
		t.Errorf("dropped lines not counted with the keys:\n%s", tail(string(b)))
	}
}
