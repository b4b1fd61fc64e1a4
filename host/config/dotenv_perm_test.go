package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A .env that others can read or write is named in one line with the
// chmod that fixes it; a private one, or none, gives no warning.
func TestDotEnvWarningLooseMode(t *testing.T) {
	h := t.TempDir()
	path := filepath.Join(h, DotEnvFile)
	if w := DotEnvWarning(h); w != "" {
		t.Fatalf("missing .env: %q", w)
	}
	for _, c := range []struct {
		mode os.FileMode
		who  string
	}{{0o644, "other users"}, {0o640, "its group"}, {0o604, "other users"}} {
		if err := os.WriteFile(path, []byte("K=v\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, c.mode); err != nil {
			t.Fatal(err)
		}
		w := DotEnvWarning(h)
		for _, want := range []string{path, c.who, "chmod 600 " + path} {
			if !strings.Contains(w, want) {
				t.Errorf("mode %04o: warning %q lacks %q", c.mode, w, want)
			}
		}
		if strings.Contains(w, "\n") {
			t.Errorf("warning is not one line: %q", w)
		}
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if w := DotEnvWarning(h); w != "" {
		t.Fatalf("private .env: %q", w)
	}
	// A symlinked .env is judged by the file it points at.
	target := filepath.Join(t.TempDir(), "secrets")
	if err := os.WriteFile(target, []byte("K=v\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := t.TempDir()
	if err := os.Symlink(target, filepath.Join(link, DotEnvFile)); err != nil {
		t.Fatal(err)
	}
	if w := DotEnvWarning(link); !strings.Contains(w, "0644") {
		t.Fatalf("symlinked loose .env: %q", w)
	}
}

// A .env owned by someone else is refused when read (see
// TestRefusesFileOfAnotherOwner), in one line: no warning besides.
func TestDotEnvWarningOtherOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	h := t.TempDir()
	path := filepath.Join(h, DotEnvFile)
	if err := os.WriteFile(path, []byte("K=v\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, -1); err != nil {
		t.Fatal(err)
	}
	if w := DotEnvWarning(h); w != "" {
		t.Errorf("warning %q for a .env that is refused", w)
	}
	var ue *UnsafeFileError
	if _, err := LoadDotEnv(h); !errors.As(err, &ue) {
		t.Errorf("LoadDotEnv = %v, want the refusal", err)
	}
}

// Writing a secret into a .env that others can read makes the file
// private. (One that others can write is refused, see
// TestRefusesFileWritableByOthers.)
func TestSetDotEnvMakesLooseFilePrivate(t *testing.T) {
	h := t.TempDir()
	path := filepath.Join(h, DotEnvFile)
	if err := os.WriteFile(path, []byte("A=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SetDotEnv(h, "TOKEN", "s3cret"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf(".env mode after a write is %04o, want 0600", fi.Mode().Perm())
	}
	if w := DotEnvWarning(h); w != "" {
		t.Fatalf("still loose after the write: %q", w)
	}
}

// Where chmod does not take (a file system without permissions), the
// secret is not written and the error says why.
func TestCheckPrivateRefusesLooseFile(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Chmod(0o644); err != nil {
		t.Fatal(err)
	}
	err = checkPrivate(f, filepath.Join(dir, DotEnvFile))
	if err == nil || !strings.Contains(err.Error(), "cannot be made private") || !strings.Contains(err.Error(), "0644") {
		t.Fatalf("checkPrivate = %v", err)
	}
	// writeAtomic leaves the target untouched when its check fails.
	path := filepath.Join(dir, DotEnvFile)
	if err := os.WriteFile(path, []byte("OLD=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	refuse := errors.New("refused")
	if err := writeAtomic(path, []byte("NEW=1\n"), 0o600, func(*os.File, string) error { return refuse }); !errors.Is(err, refuse) {
		t.Fatalf("writeAtomic = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "OLD=1\n" {
		t.Fatalf(".env changed to %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}

// .env has the same size cap as config.yaml.
func TestLoadDotEnvRefusesHugeFile(t *testing.T) {
	h := t.TempDir()
	if err := os.WriteFile(filepath.Join(h, DotEnvFile), []byte(strings.Repeat("A=1\n", MaxConfigBytes/4+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadDotEnv(h)
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("LoadDotEnv = %v", err)
	}
	if err := SetDotEnv(h, "K", "v"); !errors.As(err, &tl) {
		t.Fatalf("SetDotEnv = %v", err)
	}
}
