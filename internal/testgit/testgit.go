// Package testgit makes local git repositories for tests: the fixture
// repositories catalog installs clone, pinned to the full SHA of their one
// commit. It belongs to tests only.
package testgit

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Repo makes a git repository holding files (slash-separated names; a text
// that starts with "#!" or is an ELF binary is executable) and returns its
// folder and the full SHA of its one commit. git runs with neither the
// system's nor the user's configuration.
func Repo(t testing.TB, files map[string]string) (dir, sha string) {
	t.Helper()
	return RepoWithLinks(t, files, nil)
}

// RepoWithLinks is Repo with symbolic links committed too: links maps a
// slash-separated name to the link's target, as written (e.g. "../..").
func RepoWithLinks(t testing.TB, files, links map[string]string) (dir, sha string) {
	t.Helper()
	dir = t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := fs.FileMode(0o644)
		if strings.HasPrefix(text, "#!") || strings.HasPrefix(text, "\x7fELF") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	git("add", "-A")
	git("commit", "-q", "-m", "fixture")
	return dir, git("rev-parse", "HEAD")
}
