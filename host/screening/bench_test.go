package screening_test

import (
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/screening"
)

// One screening of a typical entry: a plain npx command, and a shell
// wrapper that cds and execs a server (parsed, expanded, wrappers looked
// through).
func BenchmarkCheck(b *testing.B) {
	for _, c := range []struct {
		name    string
		command string
		args    []string
	}{
		{"npx", "npx", []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/me/projects"}},
		{"bash -c", "bash", []string{"-c", `cd "$HOME/src/server" && exec env NODE_ENV=production node build/index.js --port "${PORT:-3000}"`}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if fs := screening.Check("x", c.command, c.args, map[string]string{"TOKEN": "t"}); fs != nil {
					b.Fatal(fs)
				}
			}
		})
	}
}

// The dearest entry found: just under MaxShellBytes of shell text whose
// every argument is read again as shell text and brace-expands.
func BenchmarkCheckWorst(b *testing.B) {
	script := strings.Repeat("echo '{a,b}{c,d}{e,f}{g,h}{1..16}'; ", (screening.MaxShellBytes-1)/38)
	b.ReportAllocs()
	for b.Loop() {
		screening.Check("x", "bash", []string{"-c", script}, nil)
	}
}
