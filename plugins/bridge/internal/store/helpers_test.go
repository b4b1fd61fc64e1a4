package store

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/fixture"
)

func TestMain(m *testing.M) {
	// Text timestamps without a zone are local time, as the agent writes
	// them; fix the zone so the expected values hold on every machine.
	time.Local = time.UTC
	os.Exit(m.Run())
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

// home returns a fresh HERMES_HOME with a state.db of kind (current, march,
// minimal, or "" for none) and, when withIndex, the sessions.json fixture.
func home(t testing.TB, kind string, withIndex bool) string {
	t.Helper()
	return fixture.Home(t, kind, withIndex, false)
}

// The fixture package names the files as the store does.
func TestFixtureNames(t *testing.T) {
	if fixture.DBFile != DBFile || fixture.IndexFile != IndexFile || fixture.DirectoryFile != DirectoryFile {
		t.Fatalf("fixture names %q %q %q, store %q %q %q", fixture.DBFile, fixture.IndexFile, fixture.DirectoryFile, DBFile, IndexFile, DirectoryFile)
	}
}
