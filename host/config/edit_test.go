package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// home returns a fresh home folder holding config.yaml with src (if non-nil).
func home(t *testing.T, src []byte) string {
	t.Helper()
	h := t.TempDir()
	if src != nil {
		if err := os.WriteFile(filepath.Join(h, File), src, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func readConfig(t *testing.T, h string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h, File))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s: got\n%s\nwant\n%s", name, got, want)
	}
}

func mustInput(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEditGolden(t *testing.T) {
	cases := []struct {
		name  string
		input string
		edit  func(d *Document) error
	}{
		{"add", "input.yaml", func(d *Document) error {
			return d.SetServer("search", NewServerEntry().
				URL("https://search.example.com/mcp").
				Header("Authorization", "Bearer ${SEARCH_KEY}").
				Header("X-Mode", "fast: yes").
				Transport("sse").
				Timeout(90*time.Second).
				ConnectTimeout(2500*time.Millisecond).
				Auth("oauth").
				Include("web_search", "fetch*"))
		}},
		{"add_stdio", "input.yaml", func(d *Document) error {
			return d.SetServer("local", NewServerEntry().
				Command("uvx", "pkg==1.2.3", "--port", "8080", "true", "").
				Env("TOKEN", "${LOCAL_TOKEN}").Env("DEBUG", "1").Env("NAME", "it's #1").
				Cwd("~/work").Enabled(false))
		}},
		{"replace", "input.yaml", func(d *Document) error {
			return d.SetServer("github", NewServerEntry().URL("https://api.githubcopilot.com/mcp/"))
		}},
		{"remove_middle", "input.yaml", func(d *Document) error {
			if !d.RemoveServer("remote") {
				return errors.New("remote not removed")
			}
			return nil
		}},
		{"remove_first", "input.yaml", func(d *Document) error {
			if !d.RemoveServer("github") {
				return errors.New("github not removed")
			}
			return nil
		}},
		{"remove_all", "input.yaml", func(d *Document) error {
			for _, n := range []string{"files", "github", "remote"} {
				if !d.RemoveServer(n) {
					return fmt.Errorf("%s not removed", n)
				}
			}
			return nil
		}},
		{"disable", "input.yaml", func(d *Document) error { return d.SetEnabled("github", false) }},
		{"enable", "input.yaml", func(d *Document) error { return d.SetEnabled("remote", true) }},
		{"disable_flow", "input.yaml", func(d *Document) error { return d.SetEnabled("files", false) }},
		{"set_auth", "input.yaml", func(d *Document) error {
			if err := d.SetAuth("remote", "oauth"); err != nil {
				return err
			}
			if err := d.SetAuth("files", "oauth"); err != nil {
				return err
			}
			// Twice changes nothing more; another method replaces it in place.
			if err := d.SetAuth("remote", "oauth"); err != nil {
				return err
			}
			return d.SetAuth("files", "exec")
		}},
		{"tools_set", "input.yaml", func(d *Document) error {
			if err := d.SetToolsFilter("github", []string{"create_issue", "list_*"}, nil); err != nil {
				return err
			}
			return d.SetToolsFilter("remote", []string{"search"}, []string{"delete"})
		}},
		{"tools_clear", "input.yaml", func(d *Document) error {
			// remote keeps "resources: false", so tools stays.
			return d.SetToolsFilter("remote", nil, nil)
		}},
		{"tools_clear_removes_block", "tools_only.yaml", func(d *Document) error {
			return d.SetToolsFilter("a", nil, nil)
		}},
		{"add_no_servers", "model_only.yaml", func(d *Document) error {
			return d.SetServer("first", NewServerEntry().Command("mcp-first"))
		}},
		{"add_null_servers", "null_servers.yaml", func(d *Document) error {
			return d.SetServer("first", NewServerEntry().Command("mcp-first"))
		}},
		{"add_empty_flow_servers", "empty_flow.yaml", func(d *Document) error {
			return d.SetServer("first", NewServerEntry().Command("mcp-first"))
		}},
		{"add_no_final_newline", "no_newline.yaml", func(d *Document) error {
			return d.SetServer("second", NewServerEntry().Command("two"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := home(t, mustInput(t, c.input))
			if err := Edit(h, c.edit); err != nil {
				t.Fatal(err)
			}
			got := readConfig(t, h)
			checkGolden(t, c.name, got)
			if _, err := Load(h); err != nil {
				t.Fatalf("edited file does not load: %v", err)
			}
		})
	}
}

func TestEditUntouchedPartsIdentical(t *testing.T) {
	in := mustInput(t, "input.yaml")
	h := home(t, in)
	if err := Edit(h, func(d *Document) error { return d.SetEnabled("remote", true) }); err != nil {
		t.Fatal(err)
	}
	got := string(readConfig(t, h))
	// Only the one scalar changed.
	want := strings.Replace(string(in), "enabled: 'no'    # off", "enabled: true    # off", 1)
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestEditNoChangeNoWrite(t *testing.T) {
	in := mustInput(t, "input.yaml")
	h := home(t, in)
	path := filepath.Join(h, File)
	// Date the file back, so a rewrite shows in its modification time
	// whatever the file system's timestamp resolution, without waiting.
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	err = Edit(h, func(d *Document) error {
		if !d.Has("github") || d.Has("nope") {
			return errors.New("Has is wrong")
		}
		if got := strings.Join(d.Names(), ","); got != "github,remote,files" {
			return fmt.Errorf("Names = %s", got)
		}
		if err := d.SetEnabled("github", true); err != nil { // default already true
			return err
		}
		return d.SetToolsFilter("files", nil, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !after.ModTime().Equal(old) || string(readConfig(t, h)) != string(in) {
		t.Fatal("file rewritten although nothing changed")
	}
}

func TestEditUnknownServer(t *testing.T) {
	h := home(t, mustInput(t, "input.yaml"))
	err := Edit(h, func(d *Document) error { return d.SetEnabled("nope", false) })
	if err == nil || !strings.Contains(err.Error(), `"nope" not found`) || !strings.Contains(err.Error(), "github, remote, files") {
		t.Fatalf("err = %v", err)
	}
	err = Edit(h, func(d *Document) error { return d.SetToolsFilter("nope", []string{"x"}, nil) })
	if err == nil {
		t.Fatal("want an error for an unknown server")
	}
	err = Edit(h, func(d *Document) error {
		if d.RemoveServer("nope") {
			return errors.New("removed a server that does not exist")
		}
		return d.SetServer("bad name", NewServerEntry().Command("x"))
	})
	if err == nil || !strings.Contains(err.Error(), "bad name") {
		t.Fatalf("err = %v", err)
	}
}

func TestEditFnErrorWritesNothing(t *testing.T) {
	in := mustInput(t, "input.yaml")
	h := home(t, in)
	boom := errors.New("boom")
	err := Edit(h, func(d *Document) error {
		_ = d.RemoveServer("github")
		return boom
	})
	if !errors.Is(err, boom) || string(readConfig(t, h)) != string(in) {
		t.Fatalf("err = %v, or file changed", err)
	}
}

func TestEditCreatesHomeAndFile(t *testing.T) {
	h := filepath.Join(t.TempDir(), "new-home")
	err := Edit(h, func(d *Document) error {
		return d.SetServer("a", NewServerEntry().Command("x"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(readConfig(t, h)); got != "mcp_servers:\n  a:\n    command: x\n" {
		t.Fatalf("got %q", got)
	}
	fi, _ := os.Stat(filepath.Join(h, File))
	di, _ := os.Stat(h)
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes: file %v, folder %v", fi.Mode(), di.Mode())
	}
}

func TestEditKeepsMode(t *testing.T) {
	h := home(t, mustInput(t, "input.yaml")) // written 0640
	if err := Edit(h, func(d *Document) error { return d.SetEnabled("github", false) }); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(h, File))
	if fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want 0640", fi.Mode().Perm())
	}
}

func TestEditFollowsSymlink(t *testing.T) {
	h := t.TempDir()
	real := filepath.Join(t.TempDir(), "real.yaml")
	if err := os.WriteFile(real, []byte("mcp_servers:\n  a:\n    command: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(h, File)); err != nil {
		t.Skip(err)
	}
	if err := Edit(h, func(d *Document) error { return d.SetEnabled("a", false) }); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(filepath.Join(h, File)); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("symlink replaced by a file")
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), "enabled: false") {
		t.Fatalf("target not edited: %s", b)
	}
}

func TestEditUnparsableNeverOverwritten(t *testing.T) {
	bad := []byte("model:\n  default: x\nmcp_servers:\n  a:\n    command: [unclosed\n  b: {\n")
	h := home(t, bad)
	called := false
	err := Edit(h, func(d *Document) error { called = true; return nil })
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line == 0 || pe.Column == 0 {
		t.Fatalf("want a ParseError with a position, got %v", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("%s:%d:%d:", filepath.Join(h, File), pe.Line, pe.Column)) || !strings.Contains(err.Error(), "fix the file") {
		t.Fatalf("message %q", err)
	}
	if called {
		t.Fatal("fn called on an unparsable file")
	}
	if string(readConfig(t, h)) != string(bad) {
		t.Fatal("unparsable file changed")
	}
	if _, err := Load(h); !errors.As(err, &pe) {
		t.Fatalf("Load: want a ParseError, got %v", err)
	}
}

func TestEditCrashBeforeRenameKeepsOldFile(t *testing.T) {
	in := mustInput(t, "input.yaml")
	h := home(t, in)
	crash := errors.New("crash")
	beforeRename = func(tmp string) error {
		if _, err := os.Stat(tmp); err != nil {
			t.Errorf("temp file missing before rename: %v", err)
		}
		return crash
	}
	defer func() { beforeRename = nil }()
	err := Edit(h, func(d *Document) error { return d.SetEnabled("github", false) })
	if !errors.Is(err, crash) {
		t.Fatalf("err = %v", err)
	}
	if string(readConfig(t, h)) != string(in) {
		t.Fatal("old file not intact")
	}
	entries, _ := os.ReadDir(h)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Fatalf("temp file left behind: %s", e.Name())
		}
	}
}

// TestHelperProcess is not a real test: the concurrency test runs the test
// binary again with HERMES_CONFIG_HELPER set, and each copy adds one server.
func TestHelperProcess(t *testing.T) {
	name := os.Getenv("HERMES_CONFIG_HELPER")
	if name == "" {
		t.Skip("helper process only")
	}
	err := Edit(os.Getenv("HERMES_CONFIG_HELPER_HOME"), func(d *Document) error {
		return d.SetServer(name, NewServerEntry().Command("cmd-"+name).Args("--id", name))
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	if err := SetDotEnv(os.Getenv("HERMES_CONFIG_HELPER_HOME"), "KEY_"+strings.ReplaceAll(name, "-", "_"), "v "+name); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
}

func TestConcurrentProcessesLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	h := home(t, mustInput(t, "input.yaml"))
	const n = 16
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("HERMES_CONFIG_HELPER=p%d", i), "HERMES_CONFIG_HELPER_HOME="+h)
		cmds[i] = cmd
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper failed: %v", err)
		}
	}
	cfg, err := Load(h)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("p%d", i)
		s := cfg.Server(name)
		if s == nil || s.Command != "cmd-"+name {
			t.Errorf("server %s lost", name)
		}
	}
	if len(cfg.Servers) != n+3 {
		t.Errorf("%d servers, want %d", len(cfg.Servers), n+3)
	}
	env, err := LoadDotEnv(h)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if env[fmt.Sprintf("KEY_p%d", i)] != fmt.Sprintf("v p%d", i) {
			t.Errorf(".env value %d lost", i)
		}
	}
	// The original entries are still byte-identical at the top of the file.
	in := string(mustInput(t, "input.yaml"))
	got := string(readConfig(t, h))
	prefix := in[:strings.Index(in, "  files:")]
	if !strings.HasPrefix(got, prefix) {
		t.Error("untouched part changed")
	}
}
