package config

import (
	"os"
	"path/filepath"
	"testing"
)

// A ${VAR} of the model: and approval: blocks is looked up in the
// environment the loader is given (the run's, cli.Options.Env) before
// .env, never in the process's; nil is the process's.
func TestSettingsBlocksReadTheRunsEnvironment(t *testing.T) {
	home := t.TempDir()
	src := "model:\n  base_url: ${BLOCK_TEST_URL}\napproval:\n  timeout: ${BLOCK_TEST_TIMEOUT}\n"
	if err := os.WriteFile(filepath.Join(home, File), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, DotEnvFile), []byte("BLOCK_TEST_URL=dotenv\nBLOCK_TEST_TIMEOUT=dotenv\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BLOCK_TEST_URL", "process")
	t.Setenv("BLOCK_TEST_TIMEOUT", "process")
	run := func(k string) (string, bool) {
		if k == "BLOCK_TEST_URL" || k == "BLOCK_TEST_TIMEOUT" {
			return "run", true
		}
		return "", false
	}
	none := func(string) (string, bool) { return "", false }
	for _, c := range []struct {
		name string
		env  func(string) (string, bool)
		want string
	}{
		{"the run's environment", run, "run"},
		{"a run without the variables", none, "dotenv"},
		{"the process's environment", nil, "process"},
	} {
		m, _, err := LoadModel(home, c.env)
		if err != nil || m["base_url"] != c.want {
			t.Errorf("%s: model.base_url %v, %v; want %q", c.name, m["base_url"], err, c.want)
		}
		a, _, err := LoadApproval(home, c.env)
		if err != nil || a["timeout"] != c.want {
			t.Errorf("%s: approval.timeout %v, %v; want %q", c.name, a["timeout"], err, c.want)
		}
	}
}
