package credentials

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A plugin's status text is cut to its bound on a rune boundary, and the
// cut is marked.
func TestBound(t *testing.T) {
	if got := bound("alice", 200); got != "alice" {
		t.Fatalf("short text changed: %q", got)
	}
	long := strings.Repeat("é", 300) // 600 bytes
	got := bound(long, 201)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "...") || len(got) > 204 {
		t.Fatalf("cut = %q (%d bytes)", got, len(got))
	}
}
