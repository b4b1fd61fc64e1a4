package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadDotEnv(t *testing.T) {
	h := t.TempDir()
	src := "# comment\n\nA=1\nexport B = two words \nC='single # kept'\nD=\"dq \\\"x\\\" \\n end\"\nE=value # trailing\nnot a line\nA=override\r\nF=\n"
	if err := os.WriteFile(filepath.Join(h, ".env"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	env, err := LoadDotEnv(h)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "override", "B": "two words", "C": "single # kept", "D": "dq \"x\" \n end", "E": "value", "F": ""}
	if len(env) != len(want) {
		t.Fatalf("got %q", env)
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if env, err := LoadDotEnv(t.TempDir()); err != nil || len(env) != 0 {
		t.Fatal("missing .env should be empty")
	}
}

func TestSetDotEnvRoundTrip(t *testing.T) {
	h := t.TempDir()
	path := filepath.Join(h, ".env")
	orig := "# secrets\nexport TOKEN=old   \n\n# other\nOTHER='keep me'  # note\nLAST=x"
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SetDotEnv(h, "TOKEN", "new"); err != nil {
		t.Fatal(err)
	}
	values := []string{"plain", "with space", "it's", "quote\"d", "multi\nline", "$dollar", "#hash", "", " lead", "back\\slash", "tab\there", "ünï"}
	for i, v := range values {
		key := "K" + string(rune('A'+i))
		if err := SetDotEnv(h, key, v); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(path)
	wantPrefix := "# secrets\nexport TOKEN=new\n\n# other\nOTHER='keep me'  # note\nLAST=x\n"
	if !strings.HasPrefix(string(b), wantPrefix) {
		t.Fatalf("got\n%s", b)
	}
	env, err := LoadDotEnv(h)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		if got := env["K"+string(rune('A'+i))]; got != v {
			t.Errorf("value %q read back as %q", v, got)
		}
	}
	if env["OTHER"] != "keep me" || env["TOKEN"] != "new" {
		t.Fatalf("%q", env)
	}
	// Replace in place, not append.
	if err := SetDotEnv(h, "KB", "changed"); err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(path)
	if strings.Count(string(b2), "KB=") != 1 || len(strings.Split(string(b2), "\n")) != len(strings.Split(string(b), "\n")) {
		t.Fatalf("not replaced in place:\n%s", b2)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
}

func TestSetDotEnvCreates0600(t *testing.T) {
	h := filepath.Join(t.TempDir(), "home")
	if err := SetDotEnv(h, "A", "b"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(h, ".env"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(h, ".env")); string(b) != "A=b\n" {
		t.Fatalf("%q", b)
	}
}

func TestSetDotEnvBadKeyHidesValue(t *testing.T) {
	err := SetDotEnv(t.TempDir(), "BAD KEY", "s3cret")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("err %v", err)
	}
}

func TestSetDotEnvCrashLeavesOldFile(t *testing.T) {
	h := t.TempDir()
	path := filepath.Join(h, ".env")
	if err := os.WriteFile(path, []byte("A=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	beforeRename = func(string) error { return os.ErrDeadlineExceeded }
	defer func() { beforeRename = nil }()
	if err := SetDotEnv(h, "A", "2"); err == nil {
		t.Fatal("want an error")
	}
	if b, _ := os.ReadFile(path); string(b) != "A=1\n" {
		t.Fatalf("%q", b)
	}
	entries, _ := os.ReadDir(h)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Fatalf("temp file left: %s", e.Name())
		}
	}
}
