package launcher

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// ServerEnv replaces the temp and proxy variables and adds its own.
func TestServerEnv(t *testing.T) {
	env := []string{"PATH=/bin", "TMPDIR=/tmp", "HTTPS_PROXY=http://corp:3128", "NO_PROXY=*", "no_proxy=x", "KEEP=1"}
	got := ServerEnv(env, "/t", 4242)
	want := []string{"PATH=/bin", "KEEP=1", "TMPDIR=/t", "TMP=/t", "TEMP=/t",
		"HTTP_PROXY=http://127.0.0.1:4242", "HTTPS_PROXY=http://127.0.0.1:4242", "http_proxy=http://127.0.0.1:4242",
		"https_proxy=http://127.0.0.1:4242", "ALL_PROXY=http://127.0.0.1:4242", "all_proxy=http://127.0.0.1:4242"}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
	if got := ServerEnv(env, "", 0); !slices.Equal(got, env) {
		t.Fatalf("nothing to set changed the env: %v", got)
	}
}

// allowedImports are the only modules outside the standard library this
// package may need (the package doc says why).
var allowedImports = []string{
	"golang.org/x/sys/",
	"golang.org/x/net/bpf",
	"github.com/elastic/go-seccomp-bpf",
	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher",
}

// The launcher needs nothing that sorts after it or is initialized after
// it: no sdk package, no gRPC, protobuf or go-plugin, directly or not.
func TestImportsStayLeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if !slices.ContainsFunc(allowedImports, func(a string) bool { return strings.HasPrefix(p, a) }) {
			t.Errorf("package launcher needs %s; it may need only the standard library and %v", p, allowedImports[:3])
		}
	}
}
