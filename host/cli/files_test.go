package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/sdk/logfile"
)

// A .env others can read is named in one warning line on stderr with the
// chmod that fixes it; the command still works and stdout is untouched.
func TestLooseDotEnvWarns(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  s:\n    url: https://example.com/mcp\n    headers:\n      Authorization: Bearer ${S_TOKEN}\n")
	env := filepath.Join(home, ".env")
	if err := os.WriteFile(env, []byte("S_TOKEN=abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	quiet := runHermes(t, home, "mcp", "list", "--json").must(t, 0)
	if quiet.stderr != "" {
		t.Fatalf("private .env: stderr %q", quiet.stderr)
	}
	if err := os.Chmod(env, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runHermes(t, home, "mcp", "list", "--json").must(t, 0)
	r.oneLineErr(t, env, "mode 0644", "chmod 600 "+env)
	if r.stdout != quiet.stdout {
		t.Errorf("stdout changed:\n%s\nwas:\n%s", r.stdout, quiet.stdout)
	}
}

// hermes.log is rotated by size: a full log becomes hermes.log.1.
func TestHostLogRotates(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	logs := filepath.Join(home, "logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	full := strings.Repeat("old log line\n", logfile.DefaultMaxBytes/13+1)
	if err := os.WriteFile(filepath.Join(logs, "hermes.log"), []byte(full), 0o600); err != nil {
		t.Fatal(err)
	}
	runHermes(t, home, "tools").must(t, 0)
	old, err := os.ReadFile(filepath.Join(logs, "hermes.log.1"))
	if err != nil || string(old) != full {
		t.Fatalf("hermes.log.1: %v (%d bytes)", err, len(old))
	}
	cur, err := os.ReadFile(filepath.Join(logs, "hermes.log"))
	if err != nil || len(cur) == 0 || len(cur) > 64<<10 || strings.Contains(string(cur), "old log line") {
		t.Fatalf("hermes.log after rotation: %v, %d bytes", err, len(cur))
	}
}
