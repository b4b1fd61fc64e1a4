package importer

import (
	"slices"
	"strings"
	"testing"
)

// TestMaskArgv: every secret-looking word of an argv is masked where it is
// shown (a token after --token, API_KEY=..., a key's shape, a URL's
// password), the rest and ${VAR} references stay, and argv itself is
// untouched.
func TestMaskArgv(t *testing.T) {
	argv := []string{
		"server.js", "--env", "API_KEY=sk-live-0123456789abcdef0123",
		"--token", "zz-custom-value-42", "--api-key=hunter2hunter2",
		"ghp_0123456789abcdefghijklmnopqrstuvwxyz", "postgres://u:pw0rd@db/x",
		"--token", "${GITHUB_TOKEN}", "--port", "3000", "-y", "pkg",
	}
	orig := slices.Clone(argv)
	got := MaskArgv(argv)
	if !slices.Equal(argv, orig) {
		t.Fatalf("argv changed: %q", argv)
	}
	joined := strings.Join(got, " ")
	for _, secret := range []string{"sk-live-0123456789abcdef0123", "zz-custom-value-42", "hunter2hunter2", "ghp_0123456789abcdefghijklmnopqrstuvwxyz", "pw0rd"} {
		if strings.Contains(joined, secret) {
			t.Errorf("%q shown in %q", secret, joined)
		}
	}
	for _, kept := range []string{"server.js", "--env", "API_KEY=", "--token", "--api-key=", "${GITHUB_TOKEN}", "--port 3000", "-y pkg"} {
		if !strings.Contains(joined, kept) {
			t.Errorf("%q not shown in %q", kept, joined)
		}
	}
}
