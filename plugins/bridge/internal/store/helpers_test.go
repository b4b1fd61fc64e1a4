package store

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	// Text timestamps without a zone are local time, as the agent writes
	// them; fix the zone so the expected values hold on every machine.
	time.Local = time.UTC
	os.Exit(m.Run())
}

// python returns the python3 executable, or skips the test (fails it under
// CI=true) when there is none.
func python(t testing.TB) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 not found; CI=true requires it to write the state.db fixtures: install python3")
		}
		t.Skipf("python3 not found; install python3 to run the state.db fixture tests")
	}
	return py
}

// runPython runs testdata/make_state_db.py with args.
func runPython(t testing.TB, args ...string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "make_state_db.py"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python(t), append([]string{script}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make_state_db.py %v: %v\n%s", args, err, out)
	}
}

// home returns a fresh HERMES_HOME with a state.db of kind (current, march,
// minimal, or "" for none) and, when withIndex, the sessions.json fixture.
func home(t testing.TB, kind string, withIndex bool) string {
	t.Helper()
	dir := t.TempDir()
	if kind != "" {
		runPython(t, kind, filepath.Join(dir, DBFile))
	}
	if withIndex {
		copyFile(t, filepath.Join("testdata", "sessions.json"), filepath.Join(dir, filepath.FromSlash(IndexFile)))
	}
	return dir
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func open(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

var ctx = context.Background()
