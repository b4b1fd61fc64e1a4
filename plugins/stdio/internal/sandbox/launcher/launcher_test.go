package launcher

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// ServerEnv replaces the temp and proxy variables and adds its own.
func TestServerEnv(t *testing.T) {
	env := []string{"PATH=/bin", "TMPDIR=/tmp", "HTTPS_PROXY=http://corp:3128", "NO_PROXY=*", "no_proxy=x", "KEEP=1", "TMPDIRX=1"}
	got := ServerEnv(env, "/t", 4242)
	want := []string{"PATH=/bin", "KEEP=1", "TMPDIRX=1", "TMPDIR=/t", "TMP=/t", "TEMP=/t",
		"HTTP_PROXY=http://127.0.0.1:4242", "HTTPS_PROXY=http://127.0.0.1:4242", "http_proxy=http://127.0.0.1:4242",
		"https_proxy=http://127.0.0.1:4242", "ALL_PROXY=http://127.0.0.1:4242", "all_proxy=http://127.0.0.1:4242"}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
	if got := ServerEnv(env, "", 0); !slices.Equal(got, env) {
		t.Fatalf("nothing to set changed the env: %v", got)
	}
}

// allowedImports are the only packages this package may import: the
// launcher binary links it, and stays resident as an init (the package doc
// says why).
var allowedImports = []string{"errors"}

// The package imports only what its doc allows (the launcher command's
// TestImportsStayLeaf holds the whole binary to its allow-list).
func TestImportsStayLeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if !slices.Contains(allowedImports, p) {
			t.Errorf("package launcher imports %s; it may import only %v", p, allowedImports)
		}
	}
}
