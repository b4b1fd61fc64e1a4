package sandboxpath_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/sdk/sandboxpath"
)

// tree makes a folder with real subfolders, for links to point into.
func tree(t testing.TB) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"w/real", "home/.hermes/mcp-installs/notes", "home/.ssh", "other"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func link(t testing.TB, target, at string) {
	t.Helper()
	if err := os.Symlink(target, at); err != nil {
		t.Fatal(err)
	}
}

func TestResolve(t *testing.T) {
	root := tree(t)
	link(t, "real", filepath.Join(root, "w/rel"))
	link(t, filepath.Join(root, "w/rel"), filepath.Join(root, "w/abs"))           // a link to a link
	link(t, "../home/.ssh", filepath.Join(root, "w/up"))                          // .. inside a target
	link(t, "abs/../../other", filepath.Join(root, "w/dotdot"))                   // .. after a link: the target's parent
	link(t, filepath.Join(root, "w/abs")+"/x/y", filepath.Join(root, "w/nested")) // a link through links to a missing path
	link(t, "loop2", filepath.Join(root, "w/loop1"))
	link(t, "loop1", filepath.Join(root, "w/loop2"))
	if err := os.WriteFile(filepath.Join(root, "w/file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		in, want string
		missing  bool
		links    int
	}{
		{in: root + "/w/real", want: root + "/w/real"},
		{in: root + "/w/rel", want: root + "/w/real", links: 1},
		{in: root + "/w/abs/", want: root + "/w/real", links: 2},
		{in: root + "/w/up", want: root + "/home/.ssh", links: 1},
		// "abs/.." is the parent of abs's target (w), not w/abs's folder.
		{in: root + "/w/dotdot", want: root + "/other", links: 3},
		{in: root + "/w/rel/../..", want: root, links: 1},
		{in: root + "/w/nested", want: root + "/w/real/x/y", missing: true, links: 3},
		{in: root + "/w/gone/../x", want: root + "/w/x", missing: true},
		{in: root + "/w/file", want: root + "/w/file"},
	} {
		r, err := sandboxpath.Resolve(tt.in)
		if err != nil {
			t.Errorf("Resolve(%s): %v", tt.in, err)
			continue
		}
		if r.Path != tt.want || r.Missing != tt.missing || len(r.Links) != tt.links {
			t.Errorf("Resolve(%s) = %+v, want %s missing=%v with %d links", tt.in, r, tt.want, tt.missing, tt.links)
		}
	}
	if _, err := sandboxpath.Resolve(root + "/w/loop1/x"); !errors.Is(err, sandboxpath.ErrLoop) {
		t.Errorf("a link loop: got %v, want ErrLoop", err)
	}
	if _, err := sandboxpath.Resolve(root + "/w/file/x"); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("a path through a file: got %v", err)
	}
	if _, err := sandboxpath.Resolve("rel/path"); err == nil {
		t.Error("a relative path was resolved")
	}
}

func TestCheck(t *testing.T) {
	root := tree(t)
	home := root + "/home/.hermes"
	install := home + "/mcp-installs/notes"
	deny := []string{home, root + "/home/.ssh"}
	w := root + "/w"
	mustRefuse := func(name string, installDir string, writable []string, want ...string) {
		t.Helper()
		_, err := sandboxpath.Check(installDir, writable, deny)
		var pe *sandboxpath.Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: got %v, want a refusal", name, err)
			return
		}
		msg := err.Error()
		for _, s := range want {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: %q does not say %q", name, msg, s)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: not one line: %q", name, msg)
		}
	}

	// The swap: W/data replaced by a link to $HERMES_HOME, then to /.
	link(t, home, w+"/data")
	mustRefuse("link to $HERMES_HOME", "", []string{w, w + "/data"}, w+"/data resolves to "+home, "never read", "remove the symbolic link")
	os.Remove(w + "/data")
	link(t, "/", w+"/data")
	mustRefuse("link to /", "", []string{w, w + "/data"}, w+"/data resolves to /,", "outside the places", "link "+w+"/data")
	// A link in the middle of an undeclared part: W/a -> other, W/a/b.
	link(t, root+"/other", w+"/a")
	mustRefuse("link on the way", "", []string{w, w + "/a/b"}, "resolves to "+root+"/other/b", "link "+w+"/a")
	// The repo's link: ${INSTALL_DIR}/data -> ../..
	link(t, "../..", install+"/data")
	mustRefuse("install folder link", install, []string{install + "/data"}, "resolves to "+home, "never read")
	// Declared inside a deny path.
	mustRefuse("inside .ssh", "", []string{root + "/home/.ssh/x"}, "inside "+root+"/home/.ssh")
	link(t, "l2", w+"/l1")
	link(t, "l1", w+"/l2")
	mustRefuse("loop", "", []string{w + "/l1"}, w+"/l1 cannot be resolved", "symbolic links")

	// Allowed: a link that stays inside the place holding it, a link made
	// outside every writable place (by the user), a path inside the install
	// folder although the folder lies inside $HERMES_HOME, a missing path.
	link(t, "real", w+"/inside")
	link(t, root+"/other", root+"/home/notes")
	if err := os.Mkdir(install+"/cache", 0o700); err != nil {
		t.Fatal(err)
	}
	plan, err := sandboxpath.Check(install, []string{w, w + "/inside", root + "/home/notes", install + "/cache", w + "/none"}, deny)
	if err != nil {
		t.Fatal(err)
	}
	want := []sandboxpath.Writable{
		{Declared: w, Path: w},
		{Declared: w + "/inside", Path: w + "/real"},
		{Declared: root + "/home/notes", Path: root + "/other"},
		{Declared: install + "/cache", Path: install + "/cache"},
		{Declared: w + "/none", Path: w + "/none", Missing: true},
	}
	for i := range want {
		if plan.Writable[i] != want[i] {
			t.Errorf("writable %d = %+v, want %+v", i, plan.Writable[i], want[i])
		}
	}
	if plan.InstallDir != install {
		t.Errorf("install folder %s, want %s", plan.InstallDir, install)
	}
}

func TestCheckDenyLink(t *testing.T) {
	root := tree(t)
	link(t, root+"/home/.ssh", root+"/sshlink")
	plan, err := sandboxpath.Check("", nil, []string{root + "/sshlink", root + "/none"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{root + "/home/.ssh", root + "/sshlink", root + "/none"}
	if strings.Join(plan.DenyRead, " ") != strings.Join(want, " ") {
		t.Errorf("deny paths %v, want %v", plan.DenyRead, want)
	}
}

func TestShow(t *testing.T) {
	if got := sandboxpath.Show("/a/b"); got != "/a/b" {
		t.Errorf("plain path shown as %s", got)
	}
	if got := sandboxpath.Show("/a\x1b[31m/b"); strings.ContainsRune(got, 0x1b) {
		t.Errorf("escape reached the message: %q", got)
	}
}

// BenchmarkCheck is the cost added to every sandboxed start: the default
// deny list, $HERMES_HOME, an install folder and three writable paths, one
// of them through a link.
func BenchmarkCheck(b *testing.B) {
	root := tree(b)
	link(b, "real", root+"/w/inside")
	home := root + "/home"
	deny := []string{home + "/.hermes", home + "/.ssh", home + "/.aws", home + "/.config/gcloud", home + "/.gnupg", home + "/.netrc"}
	writable := []string{root + "/w", root + "/w/inside", root + "/other"}
	install := home + "/.hermes/mcp-installs/notes"
	for b.Loop() {
		if _, err := sandboxpath.Check(install, writable, deny); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzResolve: whatever the path (and the links of a small tree, made
// from the input too), Resolve ends, and what it returns is clean and
// absolute.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/a/../b", "/x/l1/..", "//./a/", "/a/b/c/../../..", "/l2/x"} {
		f.Add(s, "../..")
	}
	f.Fuzz(func(t *testing.T, p, target string) {
		root, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(root+"/x/y", 0o700); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsRune(target, 0) || len(target) > 200 {
			return
		}
		_ = os.Symlink(target, root+"/x/l1")
		_ = os.Symlink("l1/../l2", root+"/x/l2")
		r, err := sandboxpath.Resolve(root + "/" + p)
		if err != nil {
			return
		}
		if !filepath.IsAbs(r.Path) || filepath.Clean(r.Path) != r.Path {
			t.Errorf("Resolve(%q) with l1 -> %q = %q: not clean and absolute", p, target, r.Path)
		}
	})
}
