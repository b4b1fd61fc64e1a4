package project

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
)

// BenchmarkLoadNoProject is what every command pays in a folder without a
// project: the climb to the repository's top.
func BenchmarkLoadNoProject(b *testing.B) {
	root, home := newRepoB(b, nil)
	dir := filepath.Join(root, "a", "b", "c")
	write(b, filepath.Join(dir, "keep"), "")
	b.ReportAllocs()
	for b.Loop() {
		if p, err := Load(dir, Options{Home: home}); err != nil || p != nil {
			b.Fatal(p, err)
		}
	}
}

// BenchmarkLoadProject reads a .mcp.json of ten servers and a
// .hermes/mcp.yaml of two, with decisions on record.
func BenchmarkLoadProject(b *testing.B) {
	var entries []string
	for i := range 10 {
		entries = append(entries, fmt.Sprintf(`"s%d": {"command": "npx", "args": ["-y", "@scope/server-%d"], "env": {"TOKEN": "${TOKEN_%d}"}}`, i, i, i))
	}
	root, home := newRepoB(b, map[string]string{
		ClaudeFile: `{"mcpServers": {` + strings.Join(entries, ",") + `}}`,
		HermesFile: "mcp_servers:\n  h1:\n    command: h1\n  h2:\n    url: https://h2.example/mcp\n",
	})
	// An entry whose ${VAR} is unset cannot be approved: the values go in
	// the home's .env, as a person would put them.
	var env strings.Builder
	for i := range 10 {
		fmt.Fprintf(&env, "TOKEN_%d=value-%d\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(home, ".env"), []byte(env.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	p, err := Load(root, Options{Home: home})
	if err != nil || len(p.Servers) != 12 {
		b.Fatal(p, err)
	}
	for _, s := range p.Servers[:6] {
		if err := Decide(home, s, "approved", false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(root, Options{Home: home}); err != nil {
			b.Fatal(err)
		}
	}
}

func newRepoB(b *testing.B, files map[string]string) (string, string) {
	base := b.TempDir()
	root, home := filepath.Join(base, "repo"), filepath.Join(base, "home")
	write(b, filepath.Join(root, ".git", "HEAD"), "")
	write(b, filepath.Join(home, "keep"), "")
	for p, text := range files {
		write(b, filepath.Join(root, p), text)
	}
	return root, home
}

// BenchmarkLoadConfigYAML reads the same twelve servers from config.yaml,
// the floor BenchmarkLoadProject is compared with.
func BenchmarkLoadConfigYAML(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("mcp_servers:\n")
	for i := range 10 {
		fmt.Fprintf(&sb, "  s%d:\n    command: npx\n    args: [-y, \"@scope/server-%d\"]\n    env: {TOKEN: \"${TOKEN_%d}\"}\n", i, i, i)
	}
	sb.WriteString("  h1:\n    command: h1\n  h2:\n    url: https://h2.example/mcp\n")
	_, home := newRepoB(b, nil)
	write(b, filepath.Join(home, config.File), sb.String())
	b.ReportAllocs()
	for b.Loop() {
		if cfg, err := config.Load(home); err != nil || len(cfg.Servers) != 12 {
			b.Fatal(cfg, err)
		}
	}
}
