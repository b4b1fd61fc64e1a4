//go:build linux

package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
)

// sandboxEntry is a config.yaml with the hostile probe server under the
// sandbox block given (YAML flow style).
func sandboxEntry(t *testing.T, block string) string {
	return "mcp_servers:\n  probe:\n    command: " + testbin.Path(t, "hermes-sandboxprobe") + "\n    sandbox: " + block + "\n"
}

// mcp test shows the sandbox asked for before connecting and what the
// stdio plugin put in force after, as text and as JSON.
func TestMCPTestShowsSandboxInForce(t *testing.T) {
	// The sandbox's default never-readable paths are under the run's
	// HOME, not the process's.
	t.Parallel()
	home := newHome(t)
	fakeHome := t.TempDir()
	writeConfig(t, home, sandboxEntry(t, "{network: none, limits: {memory: 512M, processes: 64}}"))
	r := runHermesEnv(t, home, []string{"HOME=" + fakeHome}, "mcp", "test", "probe").must(t, 0)
	out := r.stdout
	t.Logf("hermes mcp test probe:\n%s", out)
	for _, want := range []string{
		"Sandbox:\n",
		"  network: none\n",
		"  never readable: $HERMES_HOME, " + filepath.Join(fakeHome, ".ssh"),
		"Sandbox in force:\n",
		"  files: read-only except a private temp folder\n",
		"  never readable: 6 paths",
		"  network: none (Landlock TCP rules, seccomp: Unix and netlink sockets only)\n",
		"  limits: memory 512M per process (RLIMIT_DATA)",
		"  mechanisms: Landlock ABI ",
		"no_new_privs, no capabilities\n",
		"Tools discovered: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	// What was asked comes before connecting, what is in force after.
	if strings.Index(out, "Sandbox:\n") > strings.Index(out, "Connected") || strings.Index(out, "Sandbox in force:") < strings.Index(out, "Connected") {
		t.Errorf("order of the sandbox lines:\n%s", out)
	}
	if strings.Contains(out, "not enforced") {
		t.Errorf("gaps reported where the kernel enforces all:\n%s", out)
	}
	var rep struct {
		State   string `json:"state"`
		Sandbox *struct {
			Asked, Applied, Gaps []string
		} `json:"sandbox"`
	}
	js := runHermesEnv(t, home, []string{"HOME=" + fakeHome}, "mcp", "test", "probe", "--json").must(t, 0).stdout
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	if rep.State != "connected" || rep.Sandbox == nil || len(rep.Sandbox.Asked) == 0 || len(rep.Sandbox.Applied) < 4 || len(rep.Sandbox.Gaps) != 0 {
		t.Fatalf("JSON report: %s", js)
	}
}

// A sandbox the kernel cannot enforce (a deny_read path in a folder too
// crowded for Landlock's allow-only rules) fails mcp test with a one-line
// reason and the override; with enforce: false the server runs and the
// gap is shown as a warning.
func TestMCPTestSandboxRefusedAndOverridden(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	crowded := t.TempDir()
	for i := range 2100 {
		if err := os.WriteFile(filepath.Join(crowded, "f"+strconv.Itoa(i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(crowded, "f0")
	writeConfig(t, home, sandboxEntry(t, "{deny_read: ["+secret+"]}"))
	r := runHermes(t, home, "mcp", "test", "probe")
	if r.code == 0 {
		t.Fatalf("a sandbox that cannot be enforced ran:\n%s", r.stdout)
	}
	var failed string
	for _, l := range strings.Split(r.stdout+r.stderr, "\n") {
		if strings.Contains(l, "Connection failed") {
			failed = l
		}
	}
	t.Logf("refused: %s", failed)
	if !strings.Contains(failed, "sandbox: {enforce: false}") || !strings.Contains(failed, secret) {
		t.Fatalf("want one line naming %s and the override; stdout:\n%s\nstderr:\n%s", secret, r.stdout, r.stderr)
	}
	writeConfig(t, home, sandboxEntry(t, "{enforce: false, deny_read: ["+secret+"]}"))
	out := runHermes(t, home, "mcp", "test", "probe").must(t, 0).stdout
	t.Logf("enforce: false:\n%s", out)
	if !strings.Contains(out, "Sandbox in force:") || !strings.Contains(out, "not enforced: deny_read: "+secret) || !strings.Contains(out, "enforce: false (runs even where the kernel cannot enforce this)") {
		t.Fatalf("enforce: false:\n%s", out)
	}
}

// mcp test shows the paths a sandbox will use, resolved (the declared one
// beside it where a link leads elsewhere), and a writable path swapped for
// a link to $HERMES_HOME fails the test with one line naming both paths.
func TestMCPTestShowsResolvedSandboxPaths(t *testing.T) {
	// The sandbox's default never-readable paths are under the run's
	// HOME, not the process's.
	t.Parallel()
	home := newHome(t)
	fakeHome := t.TempDir()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(root, "w")
	if err := os.MkdirAll(filepath.Join(root, "real"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(w, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "notes")); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, home, sandboxEntry(t, "{network: none, writable: ["+w+", "+w+"/data, "+root+"/notes]}"))
	realHome, err := filepath.EvalSymlinks(home)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(realHome, filepath.Join(w, "data")); err != nil {
		t.Fatal(err)
	}
	r := runHermesEnv(t, home, []string{"HOME=" + fakeHome}, "mcp", "test", "probe").must(t, 1)
	out := r.stdout + r.stderr
	t.Logf("hermes mcp test probe:\n%s", out)
	for _, want := range []string{
		"  files: read-only; writable: install folder, private temp, " + w + ", " + realHome + " (declared " + w + "/data), " + root + "/real (declared " + root + "/notes)\n",
		"Connection failed",
		"writable path " + w + "/data resolves to " + realHome + ", which the server can never read",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Connected") {
		t.Errorf("the server was started:\n%s", out)
	}
}
