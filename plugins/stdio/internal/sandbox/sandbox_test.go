package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// tree makes a folder layout from paths ("a/b/" a folder, "a/c" a file,
// "l->target" a symbolic link) under a temp folder and returns its root.
func tree(t *testing.T, paths ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, p := range paths {
		if name, target, ok := strings.Cut(p, "->"); ok {
			if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func paths(root string, rules []launcher.Rule) []string {
	var out []string
	for _, r := range rules {
		rel, err := filepath.Rel(root, r.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = r.Path
		}
		out = append(out, rel)
	}
	return out
}

// A grant on an ancestor of a deny path becomes grants on everything
// beside the way down to it; symbolic links are skipped; ancestors get
// nothing; the server's own folders inside a denied one stay.
func TestBuildRulesSiblingExpansion(t *testing.T) {
	root := tree(t, "home/.ssh/id", "home/README", "home/code/x.go", "home/.config/gcloud/creds",
		"home/.config/other/", "home/.hermes/.env", "home/.hermes/mcp-installs/srv/", "home/sshlink->.ssh", "etc/")
	home := filepath.Join(root, "home")
	grants := []grant{
		{path: root, access: launcher.ReadOnly},
		{path: filepath.Join(home, ".hermes", "mcp-installs", "srv"), access: launcher.ReadWrite, own: true},
		{path: filepath.Join(home, ".hermes", "x"), access: launcher.ReadOnly}, // not the server's own: dropped
	}
	deny := []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".config", "gcloud"), filepath.Join(home, ".hermes")}
	rules, err := buildRules(grants, deny, 100)
	if err != nil {
		t.Fatal(err)
	}
	got := paths(root, rules)
	want := []string{"etc", "home/.config/other", "home/README", "home/code", "home/.hermes/mcp-installs/srv"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("rules on %v\nwant %v", got, want)
	}
	for _, r := range rules {
		if strings.HasSuffix(r.Path, "srv") != (r.Access == launcher.ReadWrite) {
			t.Errorf("rule %s has access %#x", r.Path, r.Access)
		}
		if r.NoFollow == strings.HasSuffix(r.Path, "srv") {
			t.Errorf("rule %s NoFollow=%v: listed entries must not follow links, given paths may", r.Path, r.NoFollow)
		}
	}
}

// A deny path that is a symbolic link is denied at its target too.
func TestBuildRulesDenyLinkTarget(t *testing.T) {
	root := tree(t, "keys/id", "home/other", "home/.ssh->../keys")
	rules, err := buildRules([]grant{{path: root, access: launcher.ReadOnly}}, []string{filepath.Join(root, "home", ".ssh")}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(root, rules); !slices.Equal(got, []string{"home/other"}) {
		t.Fatalf("rules on %v, want home/other only (keys is the link's target)", got)
	}
}

// Without deny paths beneath it a grant stays one rule; past the bound the
// error names the deny path.
func TestBuildRulesBound(t *testing.T) {
	var entries []string
	for i := range 50 {
		entries = append(entries, "big/"+strings.Repeat("x", i+1))
	}
	root := tree(t, append(entries, "big/secret")...)
	rules, err := buildRules([]grant{{path: root, access: launcher.ReadOnly}}, nil, 10)
	if err != nil || len(rules) != 1 {
		t.Fatalf("no deny: %v, %v", rules, err)
	}
	deny := filepath.Join(root, "big", "secret")
	_, err = buildRules([]grant{{path: root, access: launcher.ReadOnly}}, []string{deny}, 10)
	if !errors.Is(err, errTooManyRules) || !strings.Contains(err.Error(), deny) {
		t.Fatalf("past the bound: %v", err)
	}
	if rules, err = buildRules([]grant{{path: root, access: launcher.ReadOnly}}, []string{deny}, 60); err != nil || len(rules) != 50 {
		t.Fatalf("within the bound: %d rules, %v", len(rules), err)
	}
}

// A deny path that does not exist still cuts its folders: what appears
// there later is not granted.
func TestBuildRulesMissingDeny(t *testing.T) {
	root := tree(t, "home/a")
	rules, err := buildRules([]grant{{path: root, access: launcher.ReadOnly}}, []string{filepath.Join(root, "home", ".aws")}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(root, rules); !slices.Equal(got, []string{"home/a"}) {
		t.Fatalf("rules on %v", got)
	}
}

// The launcher's copies of the sdk's network modes and limits are the
// same (launcher imports no sdk package, to stay out of gRPC's init).
func TestLauncherMirrorsTransport(t *testing.T) {
	for _, m := range [][2]string{
		{launcher.NetworkAll, transport.NetworkAll},
		{launcher.NetworkNone, transport.NetworkNone},
		{launcher.NetworkHosts, transport.NetworkHosts},
	} {
		if m[0] != m[1] {
			t.Errorf("launcher network mode %q, transport %q", m[0], m[1])
		}
	}
	// The conversion compiles only while the fields match; the values
	// must come through in their places.
	l := transport.Limits{MemoryBytes: 1, CPUSeconds: 2, OpenFiles: 3, Processes: 4}
	if got := launcher.Limits(l); got != (launcher.Limits{MemoryBytes: 1, CPUSeconds: 2, OpenFiles: 3, Processes: 4}) {
		t.Errorf("limits: transport %+v, launcher %+v", l, got)
	}
}

// decide: what this kernel lacks becomes a gap only when it was asked for.
func TestDecide(t *testing.T) {
	full := kernel{linux: true, landlockABI: 7}
	none := &transport.Sandbox{Network: transport.Network{Mode: transport.NetworkNone}, Limits: transport.Limits{Processes: 10}}
	hosts := &transport.Sandbox{Network: transport.Network{Mode: transport.NetworkHosts, Hosts: []string{"a.example"}}}
	errNo := errors.New("no")
	for _, c := range []struct {
		name string
		sb   *transport.Sandbox
		k    kernel
		gaps []string // substrings, one per gap
	}{
		{"everything", none, full, nil},
		{"not linux", none, kernel{}, []string{"files", "network none", "limits"}},
		{"no landlock", &transport.Sandbox{}, kernel{linux: true, landlockErr: errNo}, []string{"Landlock is unavailable"}},
		{"old landlock", &transport.Sandbox{}, kernel{linux: true, landlockABI: 2}, []string{"truncation"}},
		{"none without seccomp", none, kernel{linux: true, landlockABI: 7, seccompErr: errNo}, []string{"UDP"}},
		{"none on ABI 5", none, kernel{linux: true, landlockABI: 5}, []string{"abstract Unix"}},
		{"root without pids cgroup", none, kernel{linux: true, landlockABI: 7, root: true, pidsErr: errNo}, []string{"RLIMIT_NPROC"}},
		{"hosts in a namespace, old landlock", hosts, kernel{linux: true, landlockABI: 3}, nil},
		{"hosts without namespace, ABI 4", hosts, kernel{linux: true, landlockABI: 4, netnsErr: errNo}, []string{"abstract Unix"}},
		{"hosts without namespace, ABI 3", hosts, kernel{linux: true, landlockABI: 3, netnsErr: errNo}, []string{"neither", "abstract Unix"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := decide(c.sb, c.k)
			if len(d.gaps) != len(c.gaps) {
				t.Fatalf("gaps %q, want %d: %q", d.gaps, len(c.gaps), c.gaps)
			}
			for i, g := range c.gaps {
				if !strings.Contains(d.gaps[i], g) {
					t.Errorf("gap %q does not say %q", d.gaps[i], g)
				}
			}
		})
	}
	if d := decide(none, kernel{linux: true, landlockABI: 7, root: true}); !d.cgroup || d.nproc {
		t.Errorf("root: cgroup=%v nproc=%v; want the pids cgroup", d.cgroup, d.nproc)
	}
	if d := decide(none, full); d.cgroup || !d.nproc {
		t.Errorf("non-root: cgroup=%v nproc=%v; want RLIMIT_NPROC", d.cgroup, d.nproc)
	}
}

// The refusal names what cannot be enforced and the way to override.
func TestRefusal(t *testing.T) {
	err := refusal("fs", []string{"files: x", "network none: y"})
	want := `the sandbox of server "fs" cannot be enforced here: files: x; network none: y; set sandbox: {enforce: false} in config.yaml to run it with what this kernel can enforce`
	if err.Error() != want {
		t.Fatalf("got  %s\nwant %s", err, want)
	}
}

func TestReport(t *testing.T) {
	sb := &transport.Sandbox{InstallDir: "/i", Writable: []string{"/w"}, DenyRead: []string{"/a", "/b"},
		Network: transport.Network{Mode: transport.NetworkNone},
		Limits:  transport.Limits{MemoryBytes: 2 << 30, OpenFiles: 1024, Processes: 512}}
	d := decide(sb, kernel{linux: true, landlockABI: 7, root: true})
	r := report(sb, d, 7, make([]launcher.Rule, 30), 1, 2, false, 0)
	want := []string{
		"files: read-only except the install folder, a private temp folder and 1 writable path",
		"never readable: 2 paths (30 Landlock rules in all)",
		"network: none (Landlock TCP rules, seccomp: Unix and netlink sockets only)",
		"limits: memory 2G per process (RLIMIT_DATA), open files 1024 per process, processes 512 in all (pids cgroup)",
		"mechanisms: Landlock ABI 7, seccomp, no_new_privs, no capabilities",
	}
	if !slices.Equal(r.Applied, want) || len(r.Gaps) != 0 {
		t.Fatalf("got  %q\nwant %q", r.Applied, want)
	}
}
