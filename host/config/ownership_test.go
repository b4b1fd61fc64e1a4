package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readers are the ways hermes reads config.yaml and .env: each must refuse
// a file someone else may have changed.
var readers = map[string]func(home string) error{
	"Load":       func(h string) error { _, err := Load(h); return err },
	"LoadServe":  func(h string) error { _, err := LoadServe(h, nil); return err },
	"LoadDotEnv": func(h string) error { _, err := LoadDotEnv(h); return err },
	"Edit": func(h string) error {
		return Edit(h, func(d *Document) error { return d.SetServer("added", &ServerEntry{Fields: Map{{"command", "x"}}}) })
	},
	"SetDotEnv": func(h string) error { return SetDotEnv(h, "NEW_KEY", "v") },
}

// trustHome is a home with a config.yaml (one server that reads ${K}) and a
// .env, both private; it returns the two paths.
func trustHome(t *testing.T) (home, cfg, env string) {
	t.Helper()
	home = t.TempDir()
	cfg, env = filepath.Join(home, File), filepath.Join(home, DotEnvFile)
	if err := os.WriteFile(cfg, []byte("mcp_servers:\n  s:\n    command: x\n    env: {K: \"${K}\"}\nmcp_serve:\n  call_timeout: 30\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env, []byte("K=secret-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, cfg, env
}

// wantRefusal checks that err is the one-line refusal of path, naming the
// command that fixes it, and that path is unchanged.
func wantRefusal(t *testing.T, what string, err error, path string, before []byte, fix ...string) {
	t.Helper()
	var ue *UnsafeFileError
	if !errors.As(err, &ue) || ue.Path != path {
		t.Errorf("%s: err = %v, want the refusal of %s", what, err, path)
		return
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("%s: error is not one line: %q", what, msg)
	}
	for _, f := range append([]string{path}, fix...) {
		if !strings.Contains(msg, f) {
			t.Errorf("%s: error %q lacks %q", what, msg, f)
		}
	}
	if strings.Contains(msg, "secret-value") {
		t.Errorf("%s: error shows a .env value: %q", what, msg)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("%s: %s changed: %q, was %q", what, path, after, before)
	}
}

// config.yaml or .env writable by the group or by other users is refused
// by every reader, with the chmod that fixes it; the file is kept as it
// is. A file only others can read is no refusal (config.yaml) or a warning
// (.env, see DotEnvWarning).
func TestRefusesFileWritableByOthers(t *testing.T) {
	for _, mode := range []os.FileMode{0o620, 0o602, 0o666, 0o660} {
		for _, which := range []string{File, DotEnvFile} {
			home, cfg, env := trustHome(t)
			path, fix := cfg, "chmod go-w "+cfg
			if which == DotEnvFile {
				path, fix = env, "chmod 600 "+env
			}
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(path)
			for name, read := range readers {
				if which == File && (name == "LoadDotEnv" || name == "SetDotEnv") {
					continue // they do not read config.yaml
				}
				if which == DotEnvFile && name == "Edit" {
					continue // Edit does not read .env
				}
				wantRefusal(t, name+" with "+which+" mode "+mode.String(), read(home), path, before, fix)
			}
		}
	}
	// Readable by all, writable by the owner only: used.
	home, cfg, env := trustHome(t)
	for _, p := range []string{cfg, env} {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, read := range readers {
		if err := read(home); err != nil {
			t.Errorf("%s with files of mode 0644: %v", name, err)
		}
	}
}

// config.yaml or .env owned by another user is refused with the chown that
// fixes it, the check is made on the file opened (a symlink is judged by
// the file it leads to), and root's own files are trusted.
func TestRefusesFileOfAnotherOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root can give a file to another user")
	}
	const nobody = 65534
	for _, which := range []string{File, DotEnvFile} {
		home, cfg, env := trustHome(t)
		path := cfg
		if which == DotEnvFile {
			path = env
		}
		if err := os.Chown(path, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(path)
		for name, read := range readers {
			if (which == File && (name == "LoadDotEnv" || name == "SetDotEnv")) || (which == DotEnvFile && name == "Edit") {
				continue
			}
			fix := []string{"chown root " + path}
			if which == DotEnvFile {
				fix = append(fix, "chmod 600 "+path)
			}
			wantRefusal(t, name+" with "+which+" owned by nobody", read(home), path, before, fix...)
		}
	}
	// A symlink of the user's own leading to another user's file.
	home, _, env := trustHome(t)
	elsewhere := filepath.Join(t.TempDir(), "secrets")
	if err := os.Rename(env, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, env); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(elsewhere, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(elsewhere)
	wantRefusal(t, "LoadDotEnv through a symlink", readers["LoadDotEnv"](home), env, before, "chown root "+env)
}

// A .env only the group or others can read is used, with a warning; one
// that is refused gets no warning (the refusal says it all, in one line).
func TestDotEnvWarningOnlyForReadable(t *testing.T) {
	home, _, env := trustHome(t)
	if err := os.Chmod(env, 0o640); err != nil {
		t.Fatal(err)
	}
	if w := DotEnvWarning(home); !strings.Contains(w, "chmod 600 "+env) {
		t.Errorf("group-readable .env: warning %q", w)
	}
	if _, err := LoadDotEnv(home); err != nil {
		t.Errorf("group-readable .env refused: %v", err)
	}
	if err := os.Chmod(env, 0o660); err != nil {
		t.Fatal(err)
	}
	if w := DotEnvWarning(home); w != "" {
		t.Errorf("group-writable .env (refused): warning %q as well", w)
	}
}

// BenchmarkCheckTrusted is what the check adds to each read of config.yaml
// or .env, given the fstat that reading does anyway.
func BenchmarkCheckTrusted(b *testing.B) {
	path := filepath.Join(b.TempDir(), DotEnvFile)
	if err := os.WriteFile(path, []byte("K=v\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := checkTrusted(fi, path, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadDotEnv reads a small .env, the check included.
func BenchmarkLoadDotEnv(b *testing.B) {
	home := b.TempDir()
	if err := os.WriteFile(filepath.Join(home, DotEnvFile), []byte("K=v\nTOKEN=abc\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := LoadDotEnv(home); err != nil {
			b.Fatal(err)
		}
	}
}
