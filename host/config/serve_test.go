package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadServe(t *testing.T) {
	home := t.TempDir()
	s, err := LoadServe(home, nil)
	if err != nil || s.MaxResultBytes != DefaultServeMaxResultBytes || s.CallTimeout != DefaultServeCallTimeout || len(s.Bridges) != 0 {
		t.Fatalf("no config: %+v, %v", s, err)
	}
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(home, File), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("model: x\nmcp_serve:\n  max_result_mb: 2\n  call_timeout: 1.5\n  messaging:\n    telegram_base_url: ${TG_URL}\n")
	if err := os.WriteFile(filepath.Join(home, DotEnvFile), []byte("TG_URL=http://127.0.0.1:9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = LoadServe(home, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxResultBytes != 2<<20 || s.MaxRequestBytes != DefaultServeMaxRequestBytes || s.CallTimeout != 1500*time.Millisecond || s.Bridges["messaging"]["telegram_base_url"] != "http://127.0.0.1:9" {
		t.Fatalf("settings = %+v", s)
	}
	for text, want := range map[string]string{
		"mcp_serve: [1]\n":                           "mcp_serve must be a mapping",
		"mcp_serve:\n  max_result_mb: lots\n":        `key "mcp_serve.max_result_mb": want a number of megabytes`,
		"mcp_serve:\n  messaging: 3\n":               `key "mcp_serve.messaging": want a mapping`,
		"mcp_serve:\n  messaging:\n    u: ${NOPE}\n": "needs ${NOPE}",
	} {
		write(text)
		if _, err := LoadServe(home, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", text, err, want)
		}
	}
}

// A ${VAR} of mcp_serve is looked up in the environment LoadServe is
// given (the run's, cli.Options.Env) before .env, never in the process's;
// nil is the process's.
func TestLoadServeReadsTheRunsEnvironment(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, File), []byte("mcp_serve:\n  call_timeout: ${SERVE_TEST_TIMEOUT}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, DotEnvFile), []byte("SERVE_TEST_TIMEOUT=3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SERVE_TEST_TIMEOUT", "2")
	run := func(k string) (string, bool) {
		if k == "SERVE_TEST_TIMEOUT" {
			return "1", true
		}
		return "", false
	}
	none := func(string) (string, bool) { return "", false }
	for _, c := range []struct {
		name string
		env  func(string) (string, bool)
		want time.Duration
	}{
		{"the run's environment", run, time.Second},
		{"a run without the variable", none, 3 * time.Second},
		{"the process's environment", nil, 2 * time.Second},
	} {
		s, err := LoadServe(home, c.env)
		if err != nil || s.CallTimeout != c.want {
			t.Errorf("%s: call_timeout %v, %v; want %v", c.name, s, err, c.want)
		}
	}
}
