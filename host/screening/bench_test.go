package screening_test

import (
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
