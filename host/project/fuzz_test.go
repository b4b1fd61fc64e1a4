package project

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
)

// FuzzProjectFiles: whatever a repository's project files hold, Load
// returns an error or servers that each carry their origin, a digest and a
// decision, and never a sandbox the file wrote for a local server.
func FuzzProjectFiles(f *testing.F) {
	f.Add(`{"mcpServers": {"a": {"command": "x", "args": ["${HOME}"]}}}`, "mcp_servers:\n  b:\n    command: y\n    sandbox: {writable: [/]}\n")
	f.Add(`{"mcpServers": {"a": {"type": "http", "url": "https://e/mcp", "headers": {"Authorization": "Bearer t"}}}}`, "")
	f.Add(`{"mcpServers": null}`, "mcp_servers: [1, 2]\n")
	f.Add(`[`, "mcp_servers:\n  &a x: *a\n")
	base := f.TempDir()
	f.Fuzz(func(t *testing.T, claude, hermes string) {
		root, err := os.MkdirTemp(base, "repo")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(root)
		if err := os.MkdirAll(filepath.Join(root, ".hermes"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, ClaudeFile), []byte(claude), 0o644); err != nil {
			t.Fatal(err)
		}
		if hermes != "" {
			if err := os.WriteFile(filepath.Join(root, HermesFile), []byte(hermes), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p, err := Load(root, Options{Home: filepath.Join(root, "home"), Env: func(string) (string, bool) { return "", false }})
		if err != nil {
			return
		}
		if p == nil {
			t.Fatal("project files written, no project found")
		}
		for _, s := range p.Servers {
			if !s.FromProject() || len(s.Origin.Digest) != 64 || s.Origin.Approval != config.ApprovalPending {
				t.Fatalf("%q: origin %+v", s.Name, s.Origin)
			}
			if s.Err == nil && s.Launch().Local {
				if sb := s.Launch().Sandbox; sb == nil || len(sb.Writable) < 1 || sb.Writable[0] != root || !sb.Enforce {
					t.Fatalf("%q: sandbox %+v", s.Name, sb)
				}
			}
		}
	})
}
