package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// catalogFixture is a catalog folder for $HERMES_OPTIONAL_MCPS: entries in
// every state, one for a newer hermes, one invalid, and one whose
// description tries to drive the terminal.
var catalogFixture = map[string]string{
	"alpha": `manifest_version: 1
name: alpha
description: Alpha, not installed.
source: https://example.com/alpha
transport: {type: http, url: "https://alpha.example.com/mcp"}
`,
	"beta": `manifest_version: 1
name: beta
description: Beta, installed and disabled.
transport: {type: http, url: "https://beta.example.com/mcp"}
`,
	"gamma": `manifest_version: 1
name: gamma
description: "Gamma, enabled \e]0;pwned\a\e[31mred"
transport: {type: http, url: "https://gamma.example.com/mcp"}
`,
	"future": `manifest_version: 7
name: future
description: From a newer hermes.
transport: {type: carrier-pigeon}
`,
	"broken": `manifest_version: 1
name: broken
transport: {type: http, url: "https://broken.example.com/mcp"}
`,
	// A folder without a manifest.yaml is not an entry.
	"notes": "",
}

const catalogConfig = `mcp_servers:
  beta:
    url: https://beta.example.com/mcp
    enabled: false
    catalog: beta
  gamma:
    url: https://gamma.example.com/mcp
    catalog: gamma
  mine:
    command: my-server
    args: ["--token", "${MY_TOKEN}"]
  mine-off:
    url: https://off.example.com/mcp
    enabled: false
`

func writeCatalogFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range catalogFixture {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if text == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name, "manifest.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// hermes mcp catalog lists the catalog's entries with their status, then
// the custom servers of config.yaml; an entry for a newer hermes is listed
// and warned about, an invalid one is warned about with its reason, the
// warnings go to stderr, and manifest text never reaches the terminal raw.
func TestCatalogCommand(t *testing.T) {
	t.Parallel()
	// Not in parallel: sets variables hermes reads from the process.
	home := newHome(t)
	writeConfig(t, home, catalogConfig)
	extra := []string{"HERMES_OPTIONAL_MCPS=" + writeCatalogFixture(t), "MY_TOKEN=s3cr3t-token"}

	r := runHermesEnv(t, home, extra, "mcp", "catalog").must(t, 0)
	var names []string
	rows := map[string]string{}
	for _, l := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] == "Name" || strings.HasPrefix(f[0], "─") || f[0] == "Install:" {
			continue
		}
		names = append(names, f[0])
		rows[f[0]] = strings.Join(f[1:], " ")
	}
	if got, want := strings.Join(names, " "), "alpha beta future gamma mine mine-off"; got != want {
		t.Errorf("rows %q, want %q:\n%s", got, want, r.stdout)
	}
	for name, want := range map[string]string{
		"alpha":    "available Alpha, not installed.",
		"beta":     "installed (disabled) Beta, installed and disabled.",
		"gamma":    `enabled Gamma, enabled \x1b]0;pwned\x07\x1b[31mred`,
		"future":   "needs a newer Hermes From a newer hermes.",
		"mine":     "custom — enabled my-server --token ${MY_TOKEN}",
		"mine-off": "custom — disabled https://off.example.com/mcp",
	} {
		if rows[name] != want {
			t.Errorf("row %s = %q, want %q", name, rows[name], want)
		}
	}
	if !strings.Contains(r.stdout, "Install: hermes mcp install <name>") {
		t.Errorf("no install hint:\n%s", r.stdout)
	}
	wantWarnings := []string{
		"⚠ 'broken' cannot be installed, its manifest is invalid: ",
		"⚠ 'future' requires a newer Hermes; update hermes to use it",
	}
	warnings := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(warnings) != len(wantWarnings) {
		t.Fatalf("stderr has %d lines, want %d:\n%s", len(warnings), len(wantWarnings), r.stderr)
	}
	for i, w := range wantWarnings {
		if !strings.HasPrefix(warnings[i], w) {
			t.Errorf("warning %d = %q, want it to start with %q", i, warnings[i], w)
		}
	}
	if !strings.Contains(warnings[0], "description") {
		t.Errorf("the invalid entry's warning does not say what is wrong: %q", warnings[0])
	}
	for _, out := range []string{r.stdout, r.stderr} {
		if strings.ContainsAny(out, "\x1b\a") || strings.Contains(out, "s3cr3t") {
			t.Errorf("raw control characters or a resolved secret reached the terminal:\n%q", out)
		}
	}

	r = runHermesEnv(t, home, extra, "mcp", "catalog", "--json").must(t, 0)
	if r.stderr != "" {
		t.Errorf("--json wrote to stderr: %s", r.stderr)
	}
	var got struct {
		Source  string           `json:"source"`
		Entries []map[string]any `json:"entries"`
		// Warnings and Diagnostics are checked field by field.
		Warnings    []string `json:"warnings"`
		Diagnostics []struct {
			Entry, Kind, Message string
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if strings.ContainsAny(r.stdout, "\x1b\a") || strings.Contains(r.stdout, "s3cr3t") {
		t.Errorf("raw control characters or a resolved secret in --json:\n%q", r.stdout)
	}
	want := []struct {
		name, status                string
		custom, installed, enabled  bool
		transport, description, src string
	}{
		{"alpha", "available", false, false, false, "http", "Alpha, not installed.", "https://example.com/alpha"},
		{"beta", "installed_disabled", false, true, false, "http", "Beta, installed and disabled.", ""},
		{"future", "needs_newer_hermes", false, false, false, "", "From a newer hermes.", ""},
		{"gamma", "enabled", false, true, true, "http", "Gamma, enabled \x1b]0;pwned\a\x1b[31mred", ""},
		{"mine", "custom_enabled", true, true, true, "", "my-server --token ${MY_TOKEN}", ""},
		{"mine-off", "custom_disabled", true, true, false, "", "https://off.example.com/mcp", ""},
	}
	if len(got.Entries) != len(want) {
		t.Fatalf("%d entries, want %d:\n%s", len(got.Entries), len(want), r.stdout)
	}
	for i, w := range want {
		e := got.Entries[i]
		str := func(k string) string { s, _ := e[k].(string); return s }
		if str("name") != w.name || str("status") != w.status || e["custom"] != w.custom || e["installed"] != w.installed ||
			e["enabled"] != w.enabled || str("transport") != w.transport || str("description") != w.description || str("source_url") != w.src {
			t.Errorf("entry %d = %v, want %+v", i, e, w)
		}
		if (e["needs_newer_hermes"] == true) != (w.name == "future") {
			t.Errorf("entry %s: needs_newer_hermes = %v", w.name, e["needs_newer_hermes"])
		}
	}
	if len(got.Warnings) != 2 || !strings.HasPrefix(got.Warnings[0], "'broken' cannot be installed") ||
		got.Warnings[1] != "'future' requires a newer Hermes; update hermes to use it" {
		t.Errorf("warnings = %q", got.Warnings)
	}
	if len(got.Diagnostics) != 2 || got.Diagnostics[0].Entry != "broken" || got.Diagnostics[0].Kind != "invalid" ||
		got.Diagnostics[1].Entry != "future" || got.Diagnostics[1].Kind != "future_manifest" {
		t.Errorf("diagnostics = %+v", got.Diagnostics)
	}
	if !strings.HasPrefix(got.Source, "/") {
		t.Errorf("source = %q, want the fixture folder", got.Source)
	}
}

// Without $HERMES_OPTIONAL_MCPS the built-in catalog is listed, with no
// warning; a folder that does not exist fails in one line that says what
// to do; an argument is bad usage.
func TestCatalogCommandBuiltInAndErrors(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	r := runHermesEnv(t, home, []string{"HERMES_OPTIONAL_MCPS="}, "mcp", "catalog", "--json").must(t, 0)
	var got struct {
		Source   string           `json:"source"`
		Entries  []map[string]any `json:"entries"`
		Warnings []string         `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	var names []string
	for _, e := range got.Entries {
		names = append(names, e["name"].(string))
		if e["status"] != "available" {
			t.Errorf("%v: want available in an empty home", e)
		}
	}
	if got.Source != "built-in" || len(got.Warnings) != 0 || !strings.Contains(" "+strings.Join(names, " ")+" ", " github linear memory ") {
		t.Errorf("built-in catalog: source %q, warnings %q, entries %v", got.Source, got.Warnings, names)
	}

	missing := filepath.Join(t.TempDir(), "nope")
	r = runHermesEnv(t, home, []string{"HERMES_OPTIONAL_MCPS=" + missing}, "mcp", "catalog")
	r.must(t, 1).oneLineErr(t, "HERMES_OPTIONAL_MCPS="+missing, "unset it to use the built-in catalog")

	runHermes(t, home, "mcp", "catalog", "extra").must(t, 2)
}

// TestOwnServerNamedLikeCatalogEntry: a server the user added under the
// name of a catalog entry stays the user's: the catalog lists the entry as
// not installed beside the custom server, get does not call it a catalog
// entry, and uninstall refuses it and says to use remove (it deleted the
// user's server). An entry hermes installed (catalog:) is uninstalled.
func TestOwnServerNamedLikeCatalogEntry(t *testing.T) {
	t.Parallel()
	cat := catalogDir(t, map[string]string{"alpha": catalogFixture["alpha"], "beta": catalogFixture["beta"]})
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  alpha:\n    url: https://mine.example.com/mcp\n  beta:\n    url: https://beta.example.com/mcp\n    catalog: beta\n")
	extra := []string{"HERMES_OPTIONAL_MCPS=" + cat}

	out := runHermesEnv(t, home, extra, "mcp", "catalog", "--json").must(t, 0).stdout
	var v struct {
		Entries []struct{ Name, Status string } `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("catalog --json: %v\n%s", err, out)
	}
	var got []string
	for _, r := range v.Entries {
		got = append(got, r.Name+"="+r.Status)
	}
	if want := "alpha=name_taken beta=enabled alpha=custom_enabled"; strings.Join(got, " ") != want {
		t.Errorf("catalog rows = %q, want %q", strings.Join(got, " "), want)
	}
	if r := runHermesEnv(t, home, extra, "mcp", "get", "alpha").must(t, 0); strings.Contains(r.stdout, "catalog entry") {
		t.Errorf("get calls the user's server a catalog entry:\n%s", r.stdout)
	}
	runHermesEnv(t, home, extra, "mcp", "uninstall", "alpha", "--yes").must(t, 1).oneLineErr(t, "'alpha' is your own server, not one installed from the catalog; remove it with: hermes mcp remove alpha")
	// Nor does install replace it, even with --yes.
	runHermesEnv(t, home, extra, "mcp", "install", "alpha", "--yes").must(t, 1).oneLineErr(t, "'alpha' in config.yaml is your own server, not one installed from the catalog, and installing would replace it; remove it first (hermes mcp remove alpha), then install")
	if !strings.Contains(readConfig(t, home), "mine.example.com") {
		t.Fatalf("uninstall deleted the user's server:\n%s", readConfig(t, home))
	}
	// An entry written before hermes recorded catalog: that launches what
	// the entry launches is still the catalog's.
	writeConfig(t, home, "mcp_servers:\n  alpha:\n    url: https://mine.example.com/mcp\n  beta:\n    url: https://beta.example.com/mcp\n  gamma:\n    url: https://other.example.com/mcp\n")
	if r := runHermesEnv(t, home, extra, "mcp", "get", "beta").must(t, 0); !strings.Contains(r.stdout, "catalog entry 'beta'") {
		t.Errorf("an older install of beta is not called the catalog's:\n%s", r.stdout)
	}
	runHermesEnv(t, home, extra, "mcp", "uninstall", "beta", "--yes").must(t, 0)
	if strings.Contains(readConfig(t, home), "beta") {
		t.Errorf("beta was not uninstalled:\n%s", readConfig(t, home))
	}
}
