//go:build linux

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// probeEntry is a catalog entry of the test server, run through a script
// of its repository that first checks its data folder exists (as the
// memory server needs its folder), and whose sandbox declares that folder
// writable. extra are more lines of the script, before the server runs.
func probeEntry(t *testing.T, extra string, args ...string) string {
	t.Helper()
	url, sha := fixtureRepo(t, map[string]string{
		"run.sh": "#!/bin/sh\n" +
			"[ -d \"$DEMO_DATA\" ] || { echo \"no folder $DEMO_DATA\" >&2; exit 1; }\n" +
			extra +
			"exec " + testServerPath(t) + " \"$@\"\n",
	})
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = `"` + a + `"`
	}
	return `manifest_version: 1
name: demo
description: A demo server.
transport:
  type: stdio
  command: "${INSTALL_DIR}/run.sh"
  args: [` + strings.Join(quoted, ", ") + `]
  env:
    DEMO_DATA: "${HOME}/.local/share/demo"
install:
  type: git
  url: ` + url + `
  ref: ` + sha + `
sandbox:
  writable: ["${HOME}/.local/share/demo"]
  network: none
`
}

// An install is done only once its server has started and listed its
// tools. A server that starts and then fails tools/list (it exits after
// initialize) is not installed: the install fails naming what failed,
// and config.yaml, .env, the install folder and the writable folder it
// made are as before; --keep-failed keeps it, disabled. The writable
// folders the entry declares are made before the probe, mode 0700.
func TestInstallDoneOnlyWhenItWorks(t *testing.T) {
	t.Parallel()
	t.Run("fails tools/list", func(t *testing.T) {
		user := t.TempDir()
		home := newHome(t)
		writeConfig(t, home, "# mine\nmcp_servers:\n  other:\n    command: other-server\n")
		before := installTree(t, home)
		// The server initializes, then never answers tools/list: the
		// listing fails at the probe's bound whatever the machine's speed
		// (a server exiting 1 s after initialize raced the listing).
		cat := catalogDir(t, map[string]string{"demo": probeEntry(t, "", "--hang-list")})
		extra := []string{"HERMES_OPTIONAL_MCPS=" + cat, "HOME=" + user}
		r := runHermesEnv(t, home, extra, "mcp", "install", "demo", "--yes", "--probe-timeout", "2s").must(t, 1)
		r.oneLineErr(t, "installing 'demo' failed: 'demo' did not start: ", "tools/list", "nothing was installed", "--keep-failed")
		if strings.Contains(r.stdout, "Installed") {
			t.Errorf("said installed:\n%s", r.stdout)
		}
		if after := installTree(t, home); after != before {
			t.Errorf("not as before:\n%s\nwas:\n%s", after, before)
		}
		if _, err := os.Stat(filepath.Join(user, ".local")); !os.IsNotExist(err) {
			t.Errorf("the writable folder made for the probe was left behind: %v", err)
		}

		r = runHermesEnv(t, home, extra, "mcp", "install", "demo", "--yes", "--keep-failed", "--probe-timeout", "2").must(t, 0)
		if !strings.Contains(r.stdout, "Installed 'demo', disabled: it did not connect") || strings.Contains(r.stdout, "(enabled)") {
			t.Errorf("output:\n%s\n%s", r.stdout, r.stderr)
		}
		if s := loadConfig(t, home).Server("demo"); s == nil || s.Enabled {
			t.Errorf("kept entry %+v, want it disabled", s)
		}
	})

	t.Run("works", func(t *testing.T) {
		user := t.TempDir()
		data := filepath.Join(user, ".local", "share", "demo")
		home := newHome(t)
		cat := catalogDir(t, map[string]string{"demo": probeEntry(t, "")})
		r := runHermesEnv(t, home, []string{"HERMES_OPTIONAL_MCPS=" + cat, "HOME=" + user}, "mcp", "install", "demo", "--yes").must(t, 0)
		for _, want := range []string{"Created " + data + " (mode 0700)", "Connected! Found ", "Installed 'demo' (enabled)"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("output lacks %q:\n%s", want, r.stdout)
			}
		}
		for _, d := range []string{filepath.Join(user, ".local"), filepath.Join(user, ".local", "share"), data} {
			fi, err := os.Stat(d)
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: %v %v, want a folder of mode 0700", d, fi, err)
			}
		}
		if s := loadConfig(t, home).Server("demo"); s == nil || !s.Enabled {
			t.Errorf("entry %+v", s)
		}
	})
}

// When the sandbox refuses a server something and the server dies of it,
// the install's error shows what was refused (the line of its stderr that
// says so), not its last line.
func TestInstallShowsWhatTheSandboxRefused(t *testing.T) {
	t.Parallel()
	user := t.TempDir()
	home := newHome(t)
	outside := filepath.Join(user, "outside.txt")
	entry := probeEntry(t, "echo hi > "+outside+"\necho 'a complete log of this run is elsewhere' >&2\nexit 1\n")
	cat := catalogDir(t, map[string]string{"demo": entry})
	r := runHermesEnv(t, home, []string{"HERMES_OPTIONAL_MCPS=" + cat, "HOME=" + user}, "mcp", "install", "demo", "--yes").must(t, 1)
	r.oneLineErr(t, "installing 'demo' failed: 'demo' did not start", "the sandbox refused", outside, "Permission denied", "nothing was installed")
	if strings.Contains(r.stderr, "complete log") {
		t.Errorf("the error shows the last line instead of the refusal: %s", r.stderr)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("the server wrote outside its writable folders: %v", err)
	}
}
