package install

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/catalog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/hermes-agent/hermes/internal/testgit"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// gitRepo makes a git repository holding files and returns its folder
// and the full SHA of its one commit.
func gitRepo(t testing.TB, files map[string]string) (string, string) {
	t.Helper()
	return testgit.Repo(t, files)
}

// demoManifest is an entry installed from repo at sha: a stdio server
// under ${INSTALL_DIR}, one secret asked for, a bootstrap that builds.
func demoManifest(repo, sha string, bootstrap ...string) *catalog.Manifest {
	if bootstrap == nil {
		bootstrap = []string{"mkdir -p bin && printf built > bin/built"}
	}
	return &catalog.Manifest{
		Version:     1,
		Name:        "demo",
		Description: "A demo server.",
		Source:      "https://example.com/demo",
		Transport: catalog.Transport{
			Type:    "stdio",
			Command: "${INSTALL_DIR}/bin/server",
			Args:    []string{"--root", "${INSTALL_DIR}/data"},
			Env:     map[string]string{"DEMO_MODE": "fast"},
		},
		Auth:        catalog.Auth{Type: "api_key", Env: []catalog.EnvPrompt{{Name: "DEMO_TOKEN", Prompt: "Demo token", Required: true, Secret: true}}},
		Tools:       catalog.Tools{DefaultEnabled: []string{"echo", "add", "missing"}},
		Install:     &catalog.Install{Type: "git", URL: repo, Ref: sha, Bootstrap: bootstrap},
		PostInstall: "Run it.\n\x1b[31mred\x1b[0m and more\n",
	}
}

var demoTools = []Tool{{Name: "echo"}, {Name: "add"}, {Name: "sub"}}

// testInstaller installs into home without a terminal; out gets what it
// prints.
func testInstaller(home string, out *bytes.Buffer, env map[string]string) *Installer {
	return &Installer{
		Home:     home,
		Prompter: printed{ui.New(out, out, nil)},
		Probe: func(ctx context.Context, srv *config.Server) ([]Tool, error) {
			return demoTools, nil
		},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	}
}

// snapshot is everything an install may change: config.yaml, .env and
// the install folders, with modes.
func snapshot(t testing.TB, home string) string {
	t.Helper()
	var b strings.Builder
	for _, f := range []string{config.File, config.DotEnvFile} {
		p := filepath.Join(home, f)
		fi, err := os.Lstat(p)
		if err != nil {
			fmt.Fprintf(&b, "%s: absent\n", f)
			continue
		}
		data, _ := os.ReadFile(p)
		fmt.Fprintf(&b, "%s %v:\n%q\n", f, fi.Mode(), data)
	}
	root := filepath.Join(home, InstallsDir)
	var lines []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." || strings.HasSuffix(rel, ".lock") {
			return nil // the folder and lock files stay; they hold nothing
		}
		fi, _ := d.Info()
		line := fmt.Sprintf("%s %v", rel, fi.Mode())
		if d.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			line += fmt.Sprintf(" %q", data)
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	b.WriteString(strings.Join(lines, "\n"))
	return b.String()
}

// priorInstall gives home a previous install of demo: its folder, a
// config.yaml with comments and another server, a .env without a final
// newline.
func priorInstall(t testing.TB, home string) {
	t.Helper()
	dir := InstallDir(home, "demo")
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"old.txt": "old install\n", "bin/server": "#!/bin/sh\nold\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "# my settings\nmodel:\n  default: gpt  # keep me\nmcp_servers:\n  other:\n    command: other-server   # mine\n  demo:\n    command: " + dir + "/bin/server\n    tools:\n      include: [echo]\n"
	if err := os.WriteFile(filepath.Join(home, config.File), []byte(cfg), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, config.DotEnvFile), []byte("# secrets\nOTHER_KEY=abc"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestInstallFromGit(t *testing.T) {
	repo, sha := gitRepo(t, map[string]string{"bin/server": "#!/bin/sh\necho server\n", "README": "demo\n"})
	home := t.TempDir()
	var out bytes.Buffer
	in := testInstaller(home, &out, map[string]string{"DEMO_TOKEN": "tok-123456"})
	m := demoManifest(repo, sha, "mkdir -p data && printf 'built in %s' \"$INSTALL_DIR\" > data/built", "echo step two; echo to stderr >&2")
	if err := in.Install(context.Background(), m, Options{Yes: true}); err != nil {
		t.Fatalf("install: %v\n%s", err, out.String())
	}
	dir := InstallDir(home, "demo")
	text := out.String()
	for _, want := range []string{
		"Installing MCP 'demo'", "A demo server.", "Source: https://example.com/demo",
		"Clone: " + repo + " @ " + sha,
		"$ mkdir -p data && printf", "$ echo step two; echo to stderr >&2",
		"Launch: " + dir + "/bin/server --root " + dir + "/data",
		"Sandbox: none (runs with your user's rights)",
		"    step two", "    to stderr",
		"✓ DEMO_TOKEN taken from the environment",
		"✓ Connected! Found 3 tool(s) from 'demo':",
		"2/3 tools enabled (the manifest's default).",
		"✓ Saved DEMO_TOKEN to " + filepath.Join(home, ".env"),
		"✓ Installed 'demo' (enabled). Start a new Hermes session to load its tools.",
		"  Run it.\n  \\x1b[31mred\\x1b[0m and more\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "tok-123456") {
		t.Error("the secret was printed")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "data", "built")); err != nil || string(b) != "built in "+dir {
		t.Errorf("bootstrap output file: %q, %v", b, err)
	}
	head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil || strings.TrimSpace(string(head)) != sha {
		t.Errorf("clone at %q (%v), want %s", head, err, sha)
	}
	want := "mcp_servers:\n  demo:\n    command: " + dir + "/bin/server\n    args:\n      - --root\n      - " + dir + "/data\n" +
		"    env:\n      DEMO_MODE: fast\n      DEMO_TOKEN: ${DEMO_TOKEN}\n    enabled: true\n    catalog: demo\n    tools:\n      include:\n        - echo\n        - add\n"
	if got, _ := os.ReadFile(filepath.Join(home, "config.yaml")); string(got) != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}
	env, _ := config.LoadDotEnv(home)
	if env["DEMO_TOKEN"] != "tok-123456" {
		t.Errorf(".env = %v", env)
	}
	if fi, _ := os.Stat(filepath.Join(home, ".env")); fi.Mode().Perm() != 0o600 {
		t.Errorf(".env mode %v", fi.Mode())
	}
	cfg, err := config.Load(home)
	if err != nil || cfg.Server("demo").Err != nil {
		t.Fatalf("the saved entry does not load: %v %v", err, cfg.Server("demo").Err)
	}
	// Nothing of the journal is left.
	ents, _ := os.ReadDir(filepath.Join(home, InstallsDir))
	for _, e := range ents {
		if e.Name() != "demo" && !strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("left behind: %s", e.Name())
		}
	}

	// Installing again keeps the prior selection and the .env value, and
	// replaces the folder.
	out.Reset()
	if err := os.WriteFile(filepath.Join(dir, "stale"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := in.Install(context.Background(), m, Options{Yes: true}); err != nil {
		t.Fatalf("reinstall: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "✓ DEMO_TOKEN already set in .env") || !strings.Contains(out.String(), "Kept your previous tool selection.") ||
		!strings.Contains(out.String(), "'demo' is in config.yaml already") {
		t.Errorf("reinstall output:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "stale")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("the old install folder was not replaced")
	}
	if got, _ := os.ReadFile(filepath.Join(home, "config.yaml")); string(got) != want {
		t.Errorf("config.yaml after reinstall:\n%s", got)
	}
}

func TestInstallRefusals(t *testing.T) {
	repo, sha := gitRepo(t, map[string]string{"f": "x"})
	for _, tc := range []struct {
		name string
		edit func(m *catalog.Manifest)
		opts Options
		want string
		is   error
	}{
		{"short sha", func(m *catalog.Manifest) { m.Install.Ref = sha[:12] }, Options{Yes: true}, "not a full 40-hex commit SHA", nil},
		{"branch", func(m *catalog.Manifest) { m.Install.Ref = "main" }, Options{Yes: true}, "not a full 40-hex commit SHA", nil},
		{"no terminal", func(m *catalog.Manifest) {}, Options{}, "run again with --yes to install without a terminal", ErrConfirmNeeded},
		{"no install block", func(m *catalog.Manifest) { m.Install = nil }, Options{Yes: true}, "references ${INSTALL_DIR} but has no install block", nil},
		{"bad sandbox", func(m *catalog.Manifest) { m.Sandbox = map[string]any{"network": "some"} }, Options{Yes: true}, "the sandbox of 'demo' is not valid", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			priorInstall(t, home)
			before := snapshot(t, home)
			m := demoManifest(repo, sha)
			tc.edit(m)
			var out bytes.Buffer
			err := testInstaller(home, &out, nil).Install(context.Background(), m, Options(tc.opts))
			if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if after := snapshot(t, home); after != before {
				t.Errorf("changed:\n%s\nwas:\n%s", after, before)
			}
		})
	}
}

// Every failure after the folder was replaced puts everything back, byte
// for byte: the prior install folder, config.yaml and .env.
func TestInstallFailureRollsBack(t *testing.T) {
	repo, sha := gitRepo(t, map[string]string{"f": "x"})
	other, _ := gitRepo(t, map[string]string{"g": "y"})
	for _, tc := range []struct {
		name string
		edit func(m *catalog.Manifest, in *Installer)
		want string
	}{
		{"bootstrap fails", func(m *catalog.Manifest, in *Installer) {
			m.Install.Bootstrap = []string{"echo one > one", "exit 3", "echo never > never"}
		}, "bootstrap step failed (exit 3): exit 3"},
		{"step timeout", func(m *catalog.Manifest, in *Installer) {
			m.Install.Bootstrap = []string{"sleep 30"}
			in.StepTimeout = 300 * time.Millisecond
		}, "bootstrap step 'sleep 30' timed out after 300ms; raise the limit with --step-timeout"},
		{"bad clone url", func(m *catalog.Manifest, in *Installer) { m.Install.URL = filepath.Join(t.TempDir(), "nothing") }, "git clone of "},
		{"commit not in repo", func(m *catalog.Manifest, in *Installer) { m.Install.URL = other }, "commit " + sha + " is not in " + other},
		{"required value missing", func(m *catalog.Manifest, in *Installer) {}, "DEMO_TOKEN is required and there is no terminal to ask for it"},
		{"rejected", func(m *catalog.Manifest, in *Installer) {
			in.LookupEnv = func(string) (string, bool) { return "v", true }
			in.Admit = func(*config.Server) error { return errors.New("suspicious") }
		}, "catalog entry 'demo' rejected: suspicious"},
		{"no tool matches", func(m *catalog.Manifest, in *Installer) {
			in.LookupEnv = func(string) (string, bool) { return "v", true }
		}, "has no tool matching 'nope'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			priorInstall(t, home)
			before := snapshot(t, home)
			m := demoManifest(repo, sha)
			var out bytes.Buffer
			in := testInstaller(home, &out, nil)
			tc.edit(m, in)
			o := Options{Yes: true}
			if tc.name == "no tool matches" {
				o.Tools = []string{"nope"}
			}
			err := in.Install(context.Background(), m, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q\n%s", err, tc.want, out.String())
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if after := snapshot(t, home); after != before {
				t.Errorf("changed:\n%s\nwas:\n%s", after, before)
			}
		})
	}
}

// A cancelled context (SIGINT) stops a running step and rolls back.
func TestInstallCancelled(t *testing.T) {
	repo, sha := gitRepo(t, map[string]string{"f": "x"})
	home := t.TempDir()
	priorInstall(t, home)
	before := snapshot(t, home)
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	in := testInstaller(home, &out, nil)
	m := demoManifest(repo, sha, "touch started; exec sleep 60")
	done := make(chan error, 1)
	go func() { done <- in.Install(ctx, m, Options{Yes: true}) }()
	testwait.For(t, 30*time.Second, "the bootstrap step to start", func() bool {
		_, err := os.Stat(filepath.Join(InstallDir(home, "demo"), "started"))
		return err == nil
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if after := snapshot(t, home); after != before {
		t.Errorf("changed:\n%s\nwas:\n%s", after, before)
	}
}

func TestInstallPlugin(t *testing.T) {
	bin := "#!/bin/sh\necho plugin\n"
	sum := sha256Of(bin)
	repo, sha := gitRepo(t, map[string]string{"src/plugin": bin, "src/evil": "#!/bin/sh\n"})
	outside := filepath.Join(t.TempDir(), "hermes-transport-demo")
	if err := os.WriteFile(outside, []byte(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, step, path, pin, want string
	}{
		{"pinned", "mkdir -p bin && cp src/plugin bin/hermes-transport-demo", "bin/hermes-transport-demo", sum, ""},
		{"recorded", "mkdir -p bin && cp src/plugin bin/hermes-transport-demo", "bin/hermes-transport-demo", "", ""},
		{"wrong pin", "mkdir -p bin && cp src/evil bin/hermes-transport-demo", "bin/hermes-transport-demo", sum,
			"plugin binary sha256 " + sha256Of("#!/bin/sh\n") + " does not match the manifest's pin " + sum},
		{"missing", "true", "bin/hermes-transport-demo", "", "the bootstrap did not produce the plugin binary bin/hermes-transport-demo"},
		{"symlink out", "mkdir -p bin && ln -s " + outside + " bin/hermes-transport-demo", "bin/hermes-transport-demo", "", "is a symlink"},
		{"folder symlinked out", "ln -s " + filepath.Dir(outside) + " bin", "bin/hermes-transport-demo", "", "it must stay inside the install folder"},
		{"path out", "true", "../hermes-transport-demo", "", "plugin.path \"../hermes-transport-demo\" must name hermes-transport-demo inside the install folder"},
		{"not executable", "mkdir -p bin && cp src/plugin bin/hermes-transport-demo && chmod -x bin/hermes-transport-demo", "bin/hermes-transport-demo", "", "is not executable"},
		{"wrong name", "true", "bin/other", "", "plugin.path \"bin/other\" must name hermes-transport-demo inside the install folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			priorInstall(t, home)
			before := snapshot(t, home)
			m := demoManifest(repo, sha, tc.step)
			m.Plugin = &catalog.Plugin{Kind: "transport", Name: "demo", Path: tc.path, SHA256: tc.pin}
			var out bytes.Buffer
			err := testInstaller(home, &out, map[string]string{"DEMO_TOKEN": "x"}).Install(context.Background(), m, Options{Yes: true})
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want %q", err, tc.want)
				}
				if after := snapshot(t, home); after != before {
					t.Errorf("changed:\n%s\nwas:\n%s", after, before)
				}
				return
			}
			if err != nil {
				t.Fatalf("install: %v\n%s", err, out.String())
			}
			cfg, err := config.Load(home)
			if err != nil {
				t.Fatal(err)
			}
			s := cfg.Server("demo")
			wantPath := filepath.Join(InstallDir(home, "demo"), "bin", "hermes-transport-demo")
			if s.Err != nil || s.Plugin == nil || s.Plugin.Path != wantPath || s.Plugin.SHA256 != sum || s.Plugin.Kind != "transport" || s.Transport != "demo" {
				t.Errorf("server %+v plugin %+v err %v", s, s.Plugin, s.Err)
			}
		})
	}
}

func sha256Of(s string) string { return installSHA256Hex([]byte(s)) }

func TestInstallBusy(t *testing.T) {
	home := t.TempDir()
	lk, err := lockEntry(home, "demo")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	repo, sha := gitRepo(t, map[string]string{"f": "x"})
	var out bytes.Buffer
	err = testInstaller(home, &out, nil).Install(context.Background(), demoManifest(repo, sha), Options{Yes: true})
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "'demo' is being installed or removed by another hermes right now") {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := Uninstall(home, "demo"); !errors.Is(err, ErrBusy) {
		t.Fatalf("uninstall err = %v", err)
	}
}

func TestUninstall(t *testing.T) {
	home := t.TempDir()
	priorInstall(t, home)
	entry, folder, err := Uninstall(home, "demo")
	if err != nil || !entry || !folder {
		t.Fatalf("Uninstall = %v %v %v", entry, folder, err)
	}
	if _, err := os.Stat(InstallDir(home, "demo")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("folder left")
	}
	got, _ := os.ReadFile(filepath.Join(home, "config.yaml"))
	if want := "# my settings\nmodel:\n  default: gpt  # keep me\nmcp_servers:\n  other:\n    command: other-server   # mine\n"; string(got) != want {
		t.Errorf("config.yaml:\n%s", got)
	}
	if env, _ := os.ReadFile(filepath.Join(home, ".env")); string(env) != "# secrets\nOTHER_KEY=abc" {
		t.Errorf(".env changed: %q", env)
	}
	entry, folder, err = Uninstall(home, "demo")
	if err != nil || entry || folder {
		t.Fatalf("second Uninstall = %v %v %v", entry, folder, err)
	}
}

// TestInstallHelperProcess is the install that TestInstallKilled kills:
// it runs only as that test's child.
func TestInstallHelperProcess(t *testing.T) {
	stage := os.Getenv("HERMES_TEST_INSTALL_KILL_AT")
	if stage == "" {
		t.Skip("run by TestInstallKilled")
	}
	installHook = func(s string) {
		if s == stage {
			fmt.Printf("AT %s\n", s)
			os.Stdout.Sync()
			select {}
		}
	}
	home := os.Getenv("HERMES_TEST_HOME")
	m := demoManifest(os.Getenv("HERMES_TEST_REPO"), os.Getenv("HERMES_TEST_SHA"), "mkdir -p bin && printf new > bin/server")
	var out bytes.Buffer
	err := testInstaller(home, &out, map[string]string{"DEMO_TOKEN": "secret-value"}).Install(context.Background(), m, Options{Yes: true})
	fmt.Printf("END %v\n", err)
}

// An install killed (SIGKILL) at any stage, the commit's included, is
// rolled back by the next Recover, byte for byte; killed once it
// committed, it is finished instead.
func TestInstallKilled(t *testing.T) {
	repo, sha := gitRepo(t, map[string]string{"f": "x"})
	stages := []string{"begun", "cloned", "bootstrapped", "credentials", "tools", "dotenv-written", "config-recorded", "config-written", "committed"}
	for _, prior := range []bool{true, false} {
		for _, stage := range stages {
			t.Run(fmt.Sprintf("prior=%v/%s", prior, stage), func(t *testing.T) {
				home := t.TempDir()
				if prior {
					priorInstall(t, home)
				}
				before := snapshot(t, home)
				cmd := exec.Command(os.Args[0], "-test.run=^TestInstallHelperProcess$", "-test.v")
				cmd.Env = append(os.Environ(), "HERMES_TEST_INSTALL_KILL_AT="+stage, "HERMES_TEST_HOME="+home, "HERMES_TEST_REPO="+repo, "HERMES_TEST_SHA="+sha)
				stdout, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				sc := bufio.NewScanner(stdout)
				reached := false
				var seen []string
				for sc.Scan() {
					seen = append(seen, sc.Text())
					if sc.Text() == "AT "+stage {
						reached = true
						break
					}
				}
				_ = cmd.Process.Signal(syscall.SIGKILL)
				_ = cmd.Wait()
				if !reached {
					t.Fatalf("the install never reached %s:\n%s", stage, strings.Join(seen, "\n"))
				}
				if _, err := os.Stat(filepath.Join(home, InstallsDir, journalPrefix+"demo")); err != nil {
					t.Fatalf("no journal after the kill: %v", err)
				}
				rec, err := Recover(home)
				if err != nil || len(rec) != 1 || rec[0].Name != "demo" || rec[0].Committed != (stage == "committed") {
					t.Fatalf("Recover = %+v, %v", rec, err)
				}
				after := snapshot(t, home)
				if stage != "committed" {
					if after != before {
						t.Errorf("not restored:\n%s\nwas:\n%s", after, before)
					}
					return
				}
				// Committed: the new install stays, complete.
				if b, _ := os.ReadFile(filepath.Join(InstallDir(home, "demo"), "bin", "server")); string(b) != "new" {
					t.Errorf("install folder: %q", b)
				}
				cfg, err := config.Load(home)
				if err != nil || cfg.Server("demo") == nil || !strings.Contains(cfg.Server("demo").Command, InstallDir(home, "demo")) {
					t.Errorf("config after a committed install: %v", err)
				}
				if strings.Contains(after, journalPrefix+"demo") {
					t.Errorf("journal left:\n%s", after)
				}
			})
		}
	}
}

// Recover leaves an install that is still running alone.
func TestRecoverSkipsRunningInstall(t *testing.T) {
	home := t.TempDir()
	priorInstall(t, home)
	tx, err := beginInstall(home, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := Recover(home); err != nil || len(rec) != 0 {
		t.Fatalf("Recover = %+v, %v", rec, err)
	}
	if _, err := os.Stat(filepath.Join(tx.dir, previousDir, "old.txt")); err != nil {
		t.Fatalf("the running install's journal was touched: %v", err)
	}
	if err := tx.rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(InstallDir(home, "demo"), "old.txt")); err != nil {
		t.Fatal(err)
	}
}

// A rollback after someone else changed config.yaml keeps their change and
// undoes only the install's entry; .env likewise.
func TestRollbackKeepsConcurrentChanges(t *testing.T) {
	home := t.TempDir()
	priorInstall(t, home)
	tx, err := beginInstall(home, "demo")
	if err != nil {
		t.Fatal(err)
	}
	e := config.NewServerEntry().Command("/new/server")
	if _, err := tx.commitUpTo(t, []envValue{{"DEMO_TOKEN", "s"}}, e); err != nil {
		t.Fatal(err)
	}
	// Another hermes adds a server and a .env value meanwhile.
	if err := config.Edit(home, func(d *config.Document) error {
		return d.SetServer("third", config.NewServerEntry().URL("https://x.example/mcp"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := config.SetDotEnv(home, "THIRD_KEY", "t"); err != nil {
		t.Fatal(err)
	}
	if err := tx.rollback(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(home, "config.yaml"))
	cfg, _ := config.Load(home)
	if cfg.Server("third") == nil || cfg.Server("demo") == nil || !strings.Contains(string(got), "include:") ||
		strings.Contains(string(got), "/new/server") {
		t.Errorf("config.yaml:\n%s", got)
	}
	env, _ := config.LoadDotEnv(home)
	if env["THIRD_KEY"] != "t" || env["OTHER_KEY"] != "abc" || env["DEMO_TOKEN"] != "" {
		t.Errorf(".env = %v", env)
	}
}

// commitUpTo runs the commit of e as demo without marking it committed,
// as an install killed right after writing config.yaml leaves it.
func (t *txn) commitUpTo(tb testing.TB, values []envValue, e *config.ServerEntry) ([]string, error) {
	installHook = func(s string) {
		if s == "config-written" {
			panic(errStop)
		}
	}
	defer func() { installHook = nil }()
	var saved []string
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil && r != errStop {
				panic(r)
			}
		}()
		saved, err = t.commit(values, func(d *config.Document) error { return d.SetServer("demo", e) })
	}()
	return saved, err
}

var errStop = errors.New("stop")

func TestReadLinesBounds(t *testing.T) {
	var lines []string
	long := strings.Repeat("x", maxLine+100)
	in := "a\r\nb\rprogress 1\rprogress 2\n\n" + long + "\nlast"
	readLines(strings.NewReader(in), func(s string) { lines = append(lines, s) })
	want := []string{"a", "b", "progress 1", "progress 2", strings.Repeat("x", maxLine) + " …", "last"}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("lines = %q", lines)
	}
	lines = nil
	big := strings.Repeat(strings.Repeat("y", 1000)+"\n", 1000)
	readLines(strings.NewReader(big), func(s string) { lines = append(lines, s) })
	if n := len(lines); n > maxShownOutput/1000+2 || lines[n-1] != "(more output not shown: over 256 KiB)" {
		t.Errorf("%d lines, last %q", n, lines[n-1])
	}
}

// A repository that hides a way out of its install folder behind an
// innocent path (issue 22, item 3): it commits data -> ../.. and its
// manifest asks writable: ["${INSTALL_DIR}/data"], which would be
// $HERMES_HOME. The install is refused after the clone and before the
// bootstrap, naming the link and where it leads, and nothing is left.
func TestInstallRefusesRepoLinkOutOfInstallFolder(t *testing.T) {
	for _, tc := range []struct{ name, link, target string }{
		{"up to HERMES_HOME", "data", "../.."},
		{"absolute, nested", "lib/deep/etc", "/etc"},
		{"through another link", "a/b", "../up/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			links := map[string]string{tc.link: tc.target}
			if tc.name == "through another link" {
				links["up"] = ".." // a link that leaves, used by another
			}
			repo, sha := testgit.RepoWithLinks(t, map[string]string{"bin/server": "#!/bin/sh\necho server\n"}, links)
			home := t.TempDir()
			priorInstall(t, home)
			before := snapshot(t, home)
			m := demoManifest(repo, sha, "touch ../../bootstrap-ran")
			m.Sandbox = map[string]any{"writable": []any{"${INSTALL_DIR}/data"}, "network": "none"}
			var out bytes.Buffer
			in := testInstaller(home, &out, map[string]string{"DEMO_TOKEN": "tok-123456"})
			err := in.Install(context.Background(), m, Options{Yes: true})
			if err == nil {
				t.Fatalf("install of a repo with %s -> %s succeeded\n%s", tc.link, tc.target, out.String())
			}
			msg := err.Error()
			name, target := tc.link, tc.target // the walk meets a/b before up
			if !strings.Contains(msg, "symbolic link "+name+" -> "+target) || !strings.Contains(msg, "leaves its install folder") || strings.Contains(msg, "\n") {
				t.Errorf("error = %q; want one line naming %s -> %s", msg, name, target)
			}
			if _, err := os.Stat(filepath.Join(home, "bootstrap-ran")); err == nil {
				t.Error("the bootstrap ran")
			}
			if after := snapshot(t, home); after != before {
				t.Errorf("changed:\n%s\nwas:\n%s", after, before)
			}
		})
	}
}

// A manifest whose writable path names $HERMES_HOME outright (no link) is
// refused before the bootstrap as well.
func TestInstallRefusesWritableIntoHermesHome(t *testing.T) {
	repo, sha := gitRepo(t, map[string]string{"bin/server": "#!/bin/sh\necho server\n"})
	home := t.TempDir()
	priorInstall(t, home)
	before := snapshot(t, home)
	m := demoManifest(repo, sha, "touch ../../bootstrap-ran")
	m.Sandbox = map[string]any{"writable": []any{"${INSTALL_DIR}/../.."}}
	var out bytes.Buffer
	in := testInstaller(home, &out, map[string]string{"DEMO_TOKEN": "tok-123456"})
	err := in.Install(context.Background(), m, Options{Yes: true})
	if err == nil || !strings.Contains(err.Error(), "never read") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v; want a one-line refusal\n%s", err, out.String())
	}
	if _, err := os.Stat(filepath.Join(home, "bootstrap-ran")); err == nil {
		t.Error("the bootstrap ran")
	}
	if after := snapshot(t, home); after != before {
		t.Errorf("changed:\n%s\nwas:\n%s", after, before)
	}
}

// The "~" of a manifest's sandbox paths is the HOME of the run's
// environment (Installer.LookupEnv), as every start of the server will
// read it, not the process's: writable: ["~/hh"] with $HERMES_HOME at
// <run's HOME>/hh is refused before the bootstrap, and the plan shows the
// run's folder.
func TestInstallSandboxTildeIsTheRunsHome(t *testing.T) {
	repo, sha := gitRepo(t, map[string]string{"bin/server": "#!/bin/sh\necho server\n"})
	user := t.TempDir()
	home := filepath.Join(user, "hh")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	priorInstall(t, home)
	before := snapshot(t, home)
	m := demoManifest(repo, sha, "touch ../../bootstrap-ran")
	m.Sandbox = map[string]any{"writable": []any{"~/hh"}}
	var out bytes.Buffer
	in := testInstaller(home, &out, map[string]string{"DEMO_TOKEN": "tok-123456", "HOME": user})
	err := in.Install(context.Background(), m, Options{Yes: true})
	if err == nil || !strings.Contains(err.Error(), "never read") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v; want a one-line refusal\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "private temp, "+home+"\n") {
		t.Errorf("the plan does not show the writable folder under the run's HOME:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(home, "bootstrap-ran")); err == nil {
		t.Error("the bootstrap ran")
	}
	if after := snapshot(t, home); after != before {
		t.Errorf("changed:\n%s\nwas:\n%s", after, before)
	}
}
