package events

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A state file this package did not write (corrupt, foreign or oversized)
// is started over, never an error that stops the watcher; one it wrote is
// read back as it was.
func TestLoadStateHostileFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := saveState(path, state{Version: stateVersion, NextCursor: 42, LastMessageID: 7, Approvals: map[string]string{"a": openMark}}); err != nil {
		t.Fatal(err)
	}
	st, found, err := loadState(path)
	if err != nil || !found || st.NextCursor != 42 || st.LastMessageID != 7 || st.Approvals["a"] != openMark {
		t.Fatalf("own file: %+v found=%v err=%v", st, found, err)
	}
	for name, data := range map[string]string{
		"corrupt":   `{"version": 1, "next_cursor": `,
		"foreign":   `[1, 2, 3]`,
		"oversized": `{"pad": "` + strings.Repeat("x", MaxStateBytes) + `"}`,
	} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if st, found, err := loadState(path); err != nil || found || st.LastMessageID != 0 {
			t.Errorf("%s file: %+v found=%v err=%v, want started over", name, st, found, err)
		}
	}
}
