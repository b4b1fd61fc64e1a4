package cli_test

import (
	"strings"
	"testing"
)

// The built binary exits with the code cli.Run returns and prints what the
// in-process runs print: success 0, a failure 1 with its one line, a usage
// error 2. The in-process tests cover each command; this covers the wiring
// of cmd/hermes (os.Exit, the process's streams and environment).
func TestBinaryExitCodes(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  alpha:\n    command: /bin/true\n")
	if r := runHermesBinary(t, home, nil, nil, "--version").must(t, 0); !strings.HasPrefix(r.stdout, "hermes ") {
		t.Errorf("hermes --version printed %q", r.stdout)
	}
	runHermesBinary(t, home, nil, nil, "mcp", "rm", "nope", "--yes").must(t, 1).oneLineErr(t, "no server named 'nope'; configured: alpha")
	runHermesBinary(t, home, nil, strings.NewReader("ignored\n"), "mcp", "add", "u", "--preset", "nope", "--no-probe").must(t, 2).oneLineErr(t, "Unknown MCP preset: nope")
	in := runHermes(t, home, "mcp", "rm", "nope", "--yes").must(t, 1)
	bin := runHermesBinary(t, home, nil, nil, "mcp", "rm", "nope", "--yes").must(t, 1)
	if in.stdout != bin.stdout || in.stderr != bin.stderr {
		t.Errorf("in process and binary differ:\nin process: %q %q\nbinary: %q %q", in.stdout, in.stderr, bin.stdout, bin.stderr)
	}
}
