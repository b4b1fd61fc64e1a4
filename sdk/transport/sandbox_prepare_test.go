package transport

import (
	"testing"

	"github.com/hermes-agent/hermes/sdk"
)

// Prepares reads the hint's comma-separated words, blanks ignored; a word
// must be whole.
func TestPrepares(t *testing.T) {
	for _, c := range []struct {
		v    string
		want bool
	}{{"pids", true}, {"x, pids", true}, {"pidsx", false}, {"", false}, {"netns,", false}} {
		if got := Prepares(c.v, PreparePids); got != c.want {
			t.Errorf("Prepares(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}

// A command the plugin runs does not inherit the hint.
func TestPrepareEnvIsHostEnv(t *testing.T) {
	if !sdk.HostEnv(PrepareEnv) {
		t.Fatalf("sdk.HostEnv(%q) = false", PrepareEnv)
	}
}
