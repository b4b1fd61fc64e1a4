package supervisor_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
)

// pinRig is a catalog install of the third-party transport plugin
// hermes-transport-mcpgostdio: a copy of the binary in an install folder,
// pinned by its sha256, while the same-named binary also sits on the
// plugin search path.
type pinRig struct {
	sup  *supervisor.Supervisor
	bin  string // the installed binary
	sum  string // its sha256
	pin  *supervisor.Pin
	spec supervisor.Spec
}

const thirdParty = "hermes-transport-mcpgostdio"

func newPinRig(t *testing.T) *pinRig {
	t.Helper()
	dir := testbin.Dir(t)
	if _, err := os.Stat(filepath.Join(dir, thirdParty)); err != nil {
		t.Fatalf("the search path must hold a same-named %s: %v", thirdParty, err)
	}
	t.Setenv("HERMES_PLUGIN_PATH", dir)
	r := &pinRig{bin: filepath.Join(t.TempDir(), "mcp-installs", "gh", thirdParty)}
	r.sum = testbin.Install(t, testbin.Path(t, thirdParty), r.bin)
	r.sup = supervisor.New(supervisor.Options{Home: t.TempDir()})
	t.Cleanup(r.sup.KillAll)
	r.pin = &supervisor.Pin{Kind: sdk.KindTransport, Name: "mcpgostdio", Path: r.bin, SHA256: r.sum}
	r.spec = supervisor.PinnedSpec(supervisor.Spec{Kind: sdk.KindTransport, Name: "mcpgostdio", Label: "gh",
		Plugins: map[string]plugin.Plugin{sdk.KindTransport: pluginhost.TransportPlugin{}}}, r.pin, "gh")
	return r
}

// sameFile fails unless the process pid executes path.
func sameFile(t *testing.T, pid int, path string) {
	t.Helper()
	var want, got syscall.Stat_t
	if err := syscall.Stat(path, &want); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat("/proc/"+strconv.Itoa(pid)+"/exe", &got); err != nil {
		t.Fatal(err)
	}
	if want.Ino != got.Ino || want.Dev != got.Dev {
		t.Fatalf("plugin process %d does not run %s", pid, path)
	}
}

// A matching pin runs the installed file itself, never the same-named
// binary on the search path.
func TestPinnedSpecRunsTheInstalledBinary(t *testing.T) {
	r := newPinRig(t)
	if r.spec.Path != r.bin || r.spec.SHA256 != r.sum || r.spec.Reinstall != "gh" {
		t.Fatalf("PinnedSpec = %+v", r.spec)
	}
	p, err := r.sup.Launch(r.spec)
	if err != nil {
		t.Fatalf("a matching pin was refused: %v", err)
	}
	if p.Path != r.bin {
		t.Fatalf("launched %s, want the pinned %s", p.Path, r.bin)
	}
	if _, err := p.Dispense(); err != nil {
		t.Fatal(err)
	}
	sameFile(t, p.Pid(), r.bin)
}

// A pin that does not match the binary is refused before anything runs,
// saying what changed and what to do.
func TestPinnedSpecRefusesAWrongPin(t *testing.T) {
	r := newPinRig(t)
	spec := r.spec
	spec.SHA256 = strings.Repeat("ab", 32)
	_, err := r.sup.Launch(spec)
	var ce *supervisor.ChecksumError
	if !errors.As(err, &ce) || ce.Got != r.sum || ce.Reinstall != "gh" {
		t.Fatalf("want a ChecksumError for gh with the real sum, got %v", err)
	}
	want := fmt.Sprintf("plugin binary %s changed since install (sha256 %s, pinned %s); run `hermes mcp install gh` again", r.bin, r.sum, spec.SHA256)
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
}

// A binary swapped after install (here: another plugin written over it)
// is refused, and runs again once the original is back.
func TestPinnedSpecRefusesASwappedBinary(t *testing.T) {
	r := newPinRig(t)
	swapped := testbin.Install(t, testbin.Path(t, "hermes-transport-stdio"), r.bin)
	_, err := r.sup.Launch(r.spec)
	var ce *supervisor.ChecksumError
	if !errors.As(err, &ce) || ce.Got != swapped || ce.Want != r.sum {
		t.Fatalf("want a ChecksumError (got %s, pinned %s), got %v", swapped, r.sum, err)
	}
	if !strings.Contains(err.Error(), "changed since install") || !strings.Contains(err.Error(), "run `hermes mcp install gh` again") {
		t.Errorf("error %q does not say what changed and what to do", err)
	}
	testbin.Install(t, testbin.Path(t, thirdParty), r.bin)
	p, err := r.sup.Launch(r.spec)
	if err != nil {
		t.Fatalf("the restored binary was refused: %v", err)
	}
	sameFile(t, p.Pid(), r.bin)
}

// A pinned binary that is gone is not replaced by the same-named one on the
// search path.
func TestPinnedSpecNeverFallsBackToTheSearchPath(t *testing.T) {
	r := newPinRig(t)
	if err := os.Remove(r.bin); err != nil {
		t.Fatal(err)
	}
	_, err := r.sup.Launch(r.spec)
	if !errors.Is(err, supervisor.ErrNotFound) || !strings.Contains(err.Error(), r.bin) || !strings.Contains(err.Error(), "hermes mcp install gh") {
		t.Fatalf("want ErrNotFound naming %s and the reinstall, got %v", r.bin, err)
	}
	// The unpinned spec still finds the search path's binary: the pin
	// alone made the difference.
	plain := r.spec
	plain.Path, plain.SHA256, plain.Reinstall = "", "", ""
	p, err := r.sup.Launch(plain)
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != filepath.Join(testbin.Dir(t), thirdParty) {
		t.Fatalf("unpinned launch ran %s", p.Path)
	}
}

// A pinned spec must be complete and exact.
func TestPinnedSpecMustBeExact(t *testing.T) {
	r := newPinRig(t)
	for _, c := range []struct {
		name string
		edit func(*supervisor.Spec)
		want string
	}{
		{"no sha256", func(s *supervisor.Spec) { s.SHA256 = "" }, "pinned without a sha256"},
		{"no path", func(s *supervisor.Spec) { s.Path = "" }, "pinned without a path"},
		{"relative path", func(s *supervisor.Spec) { s.Path = thirdParty }, "not an absolute path"},
		{"another binary's name", func(s *supervisor.Spec) { s.Path = filepath.Join(filepath.Dir(r.bin), "hermes-transport-stdio") }, "is not named " + thirdParty},
		{"a folder", func(s *supervisor.Spec) {
			d := filepath.Join(t.TempDir(), thirdParty)
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
			s.Path = d
		}, "not an executable file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := r.spec
			c.edit(&spec)
			_, err := r.sup.Launch(spec)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "hermes mcp install gh") {
				t.Fatalf("want an error with %q and the reinstall, got %v", c.want, err)
			}
		})
	}
}

// PinnedSpec changes only the launch of the plugin the pin is for.
func TestPinnedSpecAppliesToItsPluginOnly(t *testing.T) {
	base := supervisor.Spec{Kind: sdk.KindAuth, Name: "oauth", Label: "gh.auth", Dir: "/somewhere"}
	pin := &supervisor.Pin{Kind: sdk.KindAuth, Name: "custom", Path: "/i/hermes-auth-custom", SHA256: strings.Repeat("0", 64)}
	for _, p := range []*supervisor.Pin{nil, pin, {Kind: sdk.KindTransport, Name: "oauth", Path: "/i/hermes-transport-oauth", SHA256: pin.SHA256}} {
		if got := supervisor.PinnedSpec(base, p, "gh"); !reflect.DeepEqual(got, base) {
			t.Errorf("PinnedSpec(%+v) changed the spec: %+v", p, got)
		}
	}
	base.Name = "custom"
	got := supervisor.PinnedSpec(base, pin, "gh")
	if got.Path != pin.Path || got.SHA256 != pin.SHA256 || got.Reinstall != "gh" || got.Dir != "" || got.Label != "gh.auth" {
		t.Errorf("PinnedSpec for its own plugin = %+v", got)
	}
}
