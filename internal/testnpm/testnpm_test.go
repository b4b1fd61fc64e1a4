package testnpm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEntryPoint(t *testing.T) {
	cases := []struct {
		name, manifest, want string
	}{
		{"bin map", `{"bin": {"mcp-server-x": "dist/index.js"}, "main": "lib/main.js"}`, "dist/index.js"},
		{"bin string", `{"bin": "cli.js"}`, "cli.js"},
		{"main", `{"main": "lib/main.js"}`, "lib/main.js"},
		{"two bins fall back to main", `{"bin": {"a": "a.js", "b": "b.js"}, "main": "lib/main.js"}`, "lib/main.js"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "package.json"), c.manifest)
			write(t, filepath.Join(dir, filepath.FromSlash(c.want)), "")
			got, err := entryPoint(dir)
			if err != nil || got != filepath.Join(dir, filepath.FromSlash(c.want)) {
				t.Fatalf("entryPoint = %q, %v; want %s", got, err, c.want)
			}
		})
	}
	for _, manifest := range []string{`{}`, `{"bin": {"a": "a.js", "b": "b.js"}}`, `{"main": "gone.js"}`, `not json`} {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "package.json"), manifest)
		if got, err := entryPoint(dir); err == nil {
			t.Errorf("entryPoint(%s) = %q, want an error", manifest, got)
		}
	}
}

// recorder stands in for a test, recording whether it was skipped or failed.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Skipf(f string, args ...any)  { r.skipped = fmt.Sprintf(f, args...) }
func (r *recorder) Fatalf(f string, args ...any) { r.failed = fmt.Sprintf(f, args...) }

func TestMissingPackageSkipsOrFailsUnderCI(t *testing.T) {
	const pkg = "@hermes-test/not-installed"
	for _, ci := range []string{"", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv("CI", ci)
			r := &recorder{TB: t}
			node, script := Server(r, pkg)
			if node != "" || script != "" {
				t.Errorf("Server = %q, %q for a missing package", node, script)
			}
			got, other := r.skipped, r.failed
			if ci == "true" {
				got, other = r.failed, r.skipped
			}
			if got == "" || other != "" || !strings.Contains(got, InstallCommand) {
				t.Errorf("skipped %q, failed %q; want one of them (by CI=%q), naming %q", r.skipped, r.failed, ci, InstallCommand)
			}
		})
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
