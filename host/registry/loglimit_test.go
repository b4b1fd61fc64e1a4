package registry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/sdk/logfile"
)

// frozen is a clock that does not move, so a rate limit lets exactly its
// burst through.
func frozen() time.Time { return time.Unix(1_000_000, 0) }

// One server flooding log notifications writes at most its burst of lines
// into the host log; the rest are counted and reported in one line when
// the server stops.
func TestServerLogFloodIsRateLimited(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	const flood = 5 * logfile.DefaultBurst
	timings := fast()
	timings.Now = frozen
	m := startManager(t, registry.Options{Servers: []*config.Server{tsServer(dir, "loud", "--log-flood", itoa(flood))}, Deps: deps, Timings: timings})
	mustCall(t, m, "mcp_loud_attack", nil)
	eventually(t, 10*time.Second, "the first log lines", func() bool { return strings.Contains(logs.String(), "MCP server log [loud/flood]: flood line 1\n") })
	m.Close()
	text := logs.String()
	if n := strings.Count(text, "MCP server log [loud/flood]"); n != logfile.DefaultBurst {
		t.Errorf("%d of %d server log lines reached the host log, want the burst of %d", n, flood, logfile.DefaultBurst)
	}
	want := itoa(flood-logfile.DefaultBurst) + " log lines from the server dropped"
	if !strings.Contains(text, want) {
		t.Errorf("host log does not say %q", want)
	}
}

func itoa(n int) string {
	b, _ := jsonMarshal(n)
	return string(b)
}

// log_burst and log_lines_per_second set the limit of a server's log
// notifications: with a burst of 50, exactly 50 lines pass, and the
// warning about the rest names both keys.
func TestServerLogLimitKeys(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	timings := fast()
	timings.Now = frozen
	srv := tsServer(dir, "loud", "--log-flood", "500")
	srv.LogLinesPerSecond, srv.LogBurst = 7, 50
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: timings})
	mustCall(t, m, "mcp_loud_attack", nil)
	eventually(t, 10*time.Second, "the first log lines", func() bool { return strings.Contains(logs.String(), "MCP server log [loud/flood]: flood line 1\n") })
	m.Close()
	text := logs.String()
	if n := strings.Count(text, "MCP server log [loud/flood]"); n != 50 {
		t.Errorf("%d of 500 server log lines reached the host log, want log_burst's 50", n)
	}
	want := "450 log lines from the server dropped: it sent more than 7 a second (bursts of 50); raise log_lines_per_second or log_burst in its entry in config.yaml"
	if !strings.Contains(text, want) {
		t.Errorf("host log does not say %q:\n%s", want, tailOf(text))
	}
}

func tailOf(s string) string {
	if len(s) > 1500 {
		return s[len(s)-1500:]
	}
	return s
}
