package project

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
)

// FuzzProjectFiles: whatever a repository's project files hold, Load
// returns an error or servers that each carry their origin, a digest (or,
// for an entry in error, none) and a decision, never a sandbox the file
// wrote for a local server, and never an auth method that starts a
// process of the file's choosing.
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
			identified := len(s.Origin.Digest) == 64 || s.Err != nil && s.Origin.Digest == ""
			if !s.FromProject() || !identified || s.Origin.Approval != config.ApprovalPending {
				t.Fatalf("%q: origin %+v", s.Name, s.Origin)
			}
			if s.Err == nil && !config.ProjectAuth(s.Auth) {
				t.Fatalf("%q: auth %q taken from a project file", s.Name, s.Auth)
			}
			if s.Err == nil && !config.ProjectTransport(s.Launch().Transport) {
				t.Fatalf("%q: transport %q taken from a project file", s.Name, s.Launch().Transport)
			}
			if s.Err == nil && s.Launch().Local {
				if sb := s.Launch().Sandbox; sb == nil || len(sb.Writable) < 1 || sb.Writable[0] != root || !sb.Enforce {
					t.Fatalf("%q: sandbox %+v", s.Name, sb)
				}
			}
		}
	})
}

// FuzzDigestBindsEffectiveSettings: a project file and the same file with
// one edit (bytes at off replaced by ins) are read; a server both declare
// without an error (one that can be approved and run) whose two digests
// are equal must run exactly the same way (the same
// effective settings: everything Load gives it but its origin), in
// hermes's own YAML and in a .mcp.json with comments alike. An approval
// can then never carry over to something else.
func FuzzDigestBindsEffectiveSettings(f *testing.F) {
	claude := "{ // c\n\"mcpServers\": {\"ts\": {\"command\": \"npx\", \"args\": [\"-y\", \"pkg\",], \"env\": {\"API_KEY\": \"literal-0123456789abcdef\"},},\n" +
		"\"w\": {\"type\": \"http\", \"url\": \"https://w.example/mcp\", \"headers\": {\"Authorization\": \"Bearer t0123456789abcdef\"}, /* x */ \"oauth\": {\"clientId\": \"c\"}}}}\n"
	yaml := "mcp_servers:\n  ts:\n    command: npx\n    args: [-y, pkg]\n    env: {A: \"1\"}\n    timeout: 30\n" +
		"  w:\n    url: https://w.example/mcp\n    headers: {X: y}\n    auth: oauth\n    oauth: {client_id: c, scope: [a, b]}\n    tools: {include: [a], exclude: [b], on_change: deny}\n    sampling: {max_rpm: 5}\n    my_key: {z: .nan}\n"
	f.Add(false, claude, uint(40), uint(3), "/bin/sh")
	f.Add(false, claude, uint(60), uint(3), "pkh")
	f.Add(false, claude, uint(100), uint(5), "API_SECRET")
	f.Add(false, claude, uint(180), uint(1), "x")
	f.Add(true, yaml, uint(30), uint(3), "/bin/sh")
	f.Add(true, yaml, uint(75), uint(2), "31")
	f.Add(true, yaml, uint(150), uint(5), "exec")
	f.Add(true, yaml, uint(260), uint(4), "warn")
	f.Add(true, yaml, uint(290), uint(4), ".inf")
	base := f.TempDir()
	f.Fuzz(func(t *testing.T, hermes bool, a string, off, n uint, ins string) {
		if off > uint(len(a)) {
			off = uint(len(a))
		}
		n = min(n, uint(len(a))-off)
		b := a[:off] + ins + a[off+n:]
		root, err := os.MkdirTemp(base, "repo")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(root)
		name := ClaudeFile
		if hermes {
			name = HermesFile
			if err := os.MkdirAll(filepath.Join(root, ".hermes"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		o := Options{Home: filepath.Join(root, "home"), Env: func(string) (string, bool) { return "", false }}
		read := func(text string) map[string]*config.Server {
			if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := Load(root, o)
			if err != nil || p == nil {
				return nil
			}
			out := map[string]*config.Server{}
			for _, s := range p.Servers {
				out[s.Name] = s
			}
			return out
		}
		before, after := read(a), read(b)
		for name, x := range before {
			y := after[name]
			// An entry in error is never approved nor run.
			if y == nil || x.Err != nil || y.Err != nil || x.Origin.Digest != y.Origin.Digest {
				continue
			}
			if ex, ey := effective(x), effective(y); ex != ey {
				t.Fatalf("server %q: one digest %s for two ways to run:\n%s\n%s", name, x.Origin.Digest, ex, ey)
			}
		}
	})
}

// effective is everything of s that decides how it runs: the entry as
// Load gives it, but its Origin (where it came from and its approval)
// and Raw (the text its settings were read from).
func effective(s *config.Server) string {
	c := *s
	c.Origin, c.Raw, c.Err = config.Origin{}, nil, nil
	c.Sandbox, c.Plugin = nil, nil
	out := fmt.Sprintf("%+v", c)
	if s.Sandbox != nil {
		out += fmt.Sprintf(" sandbox %+v", *s.Sandbox)
	}
	if s.Plugin != nil {
		out += fmt.Sprintf(" plugin %+v", *s.Plugin)
	}
	if s.Err != nil {
		out += " err " + s.Err.Error()
	}
	return out
}
