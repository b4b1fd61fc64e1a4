package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/fixture"
)

// Resolve finds a chat id by channel name in the directory (or the session
// index without one), with or without '#', in any case, and refuses names
// that match nothing, several chats, or a channel without an id.
func TestResolve(t *testing.T) {
	dir := home(t, "current", false)
	s := open(t, dir)
	// No directory: the session index names the chats.
	if id, ok := s.Resolve("discord", "#general"); !ok || id != "789" {
		t.Errorf("fallback Resolve(#general) = %q %v", id, ok)
	}
	fixture.CopyFile(t, filepath.Join("testdata", "channel_directory.json"), filepath.Join(dir, DirectoryFile))
	cases := []struct {
		platform, name, id string
	}{
		{"discord", "#general", "789"},
		{"discord", "general", "789"},
		{"discord", "  #RANDOM ", "1234567890123"},
		{"Discord", "random", "1234567890123"},
		{"telegram", "alice", "123456"},
		{"telegram", "#general", ""}, // another platform's channel
		{"discord", "gen", ""},       // no prefix matching
		{"discord", "", ""},
		{"discord", "#", ""},
		{"slack", "no id here", ""}, // a channel without an id
	}
	for _, c := range cases {
		id, ok := s.Resolve(c.platform, c.name)
		if id != c.id || ok != (c.id != "") {
			t.Errorf("Resolve(%q, %q) = %q %v, want %q", c.platform, c.name, id, ok, c.id)
		}
	}
	// Two chats of one name: ambiguous, not resolved.
	dup := `{"platforms": {"discord": [{"id": "1", "name": "#ops"}, {"id": "2", "name": "ops"}, {"id": "3", "name": "#dev"}, {"id": "3", "name": "dev"}]}}`
	if err := os.WriteFile(filepath.Join(dir, DirectoryFile), []byte(dup), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, ok := s.Resolve("discord", "ops"); ok {
		t.Errorf("ambiguous Resolve(ops) = %q", id)
	}
	if id, ok := s.Resolve("discord", "#dev"); !ok || id != "3" {
		t.Errorf("Resolve(#dev), one chat listed twice = %q %v", id, ok)
	}
}
