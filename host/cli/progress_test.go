package cli_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestCallProgressLine: on a terminal, 'hermes mcp call' shows the
// server's progress notifications as one line rewritten in place and
// clears it before the result; without a terminal it shows none.
func TestCallProgressLine(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, fmt.Sprintf("mcp_servers:\n  ts:\n    command: %s\n", testServerPath(t)))
	tm := startTerm(t, home, nil, "mcp", "call", "ts", "slow_stream", "--arg", "steps=3", "--arg", "interval_ms=50")
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.Output())
	}
	out := tm.Output()
	last := strings.LastIndex(out, "\r\x1b[Kslow_stream: 3/3 (100%)")
	if last < 0 {
		t.Fatalf("no live progress line:\n%q", out)
	}
	rest := out[last+len("\r\x1b[Kslow_stream: 3/3 (100%)"):]
	if !strings.HasPrefix(rest, "\r\x1b[K") || !strings.Contains(rest, "done") {
		t.Errorf("the line was not cleared before the result:\n%q", rest)
	}
	if strings.Count(out, "\n") > 3 {
		t.Errorf("progress took lines of its own:\n%q", out)
	}

	r := runHermes(t, home, "mcp", "call", "ts", "slow_stream", "--arg", "steps=3", "--arg", "interval_ms=1").must(t, 0)
	if strings.Contains(r.stdout+r.stderr, "slow_stream:") || strings.Contains(r.stderr, "\x1b") {
		t.Errorf("progress shown off a terminal:\n%q\n%q", r.stdout, r.stderr)
	}
}

// TestCallProgressEverything: server-everything sends progress only when
// the call carries a progress token; hermes sends one, and shows it.
func TestCallProgressEverything(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, everythingConfig(t))
	tm := startTerm(t, home, nil, "mcp", "call", "ev", "trigger-long-running-operation", "--arg", "duration=0.3", "--arg", "steps=3")
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.Output())
	}
	out := tm.Output()
	if !strings.Contains(out, "\r\x1b[Ktrigger-long-running-operation: 3/3 (100%)\r\x1b[K") {
		t.Errorf("no live progress line:\n%q", out)
	}
	if !strings.Contains(out, "Long running operation completed") {
		t.Errorf("no result:\n%q", out)
	}
}
