package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusesFilesOthersCanChange: config.yaml that the group can write,
// and .env that belongs to another user, stop hermes with one line naming
// the file and the command that fixes it (exit 1), and both files are kept
// byte for byte. Then, fixed, the same command works.
func TestRefusesFilesOthersCanChange(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  s:\n    command: "+testServerPath(t)+"\n    env: {TOKEN: \"${TOKEN}\"}\n")
	cfg := filepath.Join(home, "config.yaml")
	env := filepath.Join(home, ".env")
	if err := os.WriteFile(env, []byte("TOKEN=do-not-show\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cfg, 0o664); err != nil {
		t.Fatal(err)
	}
	cfgBefore, envBefore := readConfig(t, home), readFile(t, env)
	r := runHermes(t, home, "mcp", "list").must(t, 1)
	r.oneLineErr(t, cfg, "writable by its group", "chmod go-w "+cfg)
	if readConfig(t, home) != cfgBefore {
		t.Errorf("config.yaml changed")
	}
	if err := os.Chmod(cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	runHermes(t, home, "mcp", "list").must(t, 0)

	if os.Geteuid() != 0 {
		t.Skip("the rest needs root: only root can give a file to another user")
	}
	if err := os.Chown(env, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	r = runHermes(t, home, "mcp", "list").must(t, 1)
	r.oneLineErr(t, env, "belongs to ", "not to you", "chown root "+env, "chmod 600 "+env)
	if readFile(t, env) != envBefore {
		t.Errorf(".env changed")
	}
	for _, out := range []string{r.stdout, r.stderr} {
		if strings.Contains(out, "do-not-show") {
			t.Errorf("a .env value was shown: %q", out)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
