package catalog

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	optionalmcps "github.com/hermes-agent/hermes/optional-mcps"
)

// shippedNames are the entries hermes ships: the original catalog's, the
// official reference servers, and GitHub's remote server.
var shippedNames = []string{
	"atlassian", "blender", "everything", "fetch", "filesystem", "git", "github",
	"linear", "memory", "n8n", "sequential-thinking", "time", "unreal-engine",
}

// shipped reads the built-in catalog and fails on any entry it cannot use.
func shipped(t *testing.T) *Catalog {
	t.Helper()
	c, err := Read(optionalmcps.FS(), BuiltIn)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range c.Diagnostics {
		t.Errorf("shipped entry %s: %s", d.Entry, d.Message)
	}
	return c
}

// TestShippedManifests checks every manifest of optional-mcps: valid for
// this version with no unknown key, pinned exactly, translatable, and a
// stdio server confined by a sandbox block that parses.
func TestShippedManifests(t *testing.T) {
	c := shipped(t)
	var names []string
	for _, m := range c.Entries {
		names = append(names, m.Name)
	}
	if !slices.Equal(names, shippedNames) {
		t.Errorf("shipped entries = %v, want %v", names, shippedNames)
	}
	// Every folder of optional-mcps is an entry: a folder without a
	// manifest.yaml would be skipped silently.
	dirents, err := fs.ReadDir(optionalmcps.FS(), ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirents) != len(c.Entries) {
		t.Errorf("optional-mcps has %d folders and %d entries", len(dirents), len(c.Entries))
	}
	for _, m := range c.Entries {
		t.Run(m.Name, func(t *testing.T) {
			if len(m.Unknown) > 0 {
				t.Errorf("unknown keys %v", m.Unknown)
			}
			if m.Install == nil && m.Source == "" && m.Name != "unreal-engine" {
				t.Errorf("no source: say where the server comes from")
			}
			if m.Install != nil && !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(m.Install.Ref) {
				t.Errorf("install.ref %q is not a full 40-hex commit SHA", m.Install.Ref)
			}
			pins, problems := m.Pins()
			for _, p := range problems {
				t.Errorf("pin: %s", p)
			}
			if m.Transport.Type == "stdio" {
				if m.Install == nil && len(pins) != 1 {
					t.Errorf("pins = %v, want exactly one launcher pin", pins)
				}
				if m.Sandbox == nil {
					t.Errorf("a stdio entry ships with a sandbox block")
				}
			}
			opts := TranslateOptions{}
			if m.Install != nil {
				opts.InstallDir = filepath.Join(t.TempDir(), "mcp-installs", m.Name)
			}
			e, err := Translate(m, opts)
			if err != nil {
				t.Fatalf("Translate: %v", err)
			}
			if e == nil {
				t.Fatal("Translate returned no entry")
			}
			p, err := m.Plan(opts)
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			if m.Transport.Type == "stdio" && len(p.Sandbox) == 0 {
				t.Errorf("the plan shows no sandbox")
			}
			if m.Install != nil && !strings.Contains(p.Launch, opts.InstallDir) {
				t.Errorf("launch %q does not run from the install folder", p.Launch)
			}
		})
	}
}

func TestPins(t *testing.T) {
	stdio := func(cmd string, args ...string) *Manifest {
		return &Manifest{Transport: Transport{Type: "stdio", Command: cmd, Args: args}}
	}
	for _, tc := range []struct {
		m       *Manifest
		pin     string
		problem string
	}{
		{m: stdio("npx", "-y", "@scope/pkg@1.2.3", "arg"), pin: "@scope/pkg@1.2.3"},
		{m: stdio("npx", "--yes", "pkg@0.10.0-beta.1"), pin: "pkg@0.10.0-beta.1"},
		{m: stdio("npx", "-p", "pkg@2.0.0", "bin"), pin: "pkg@2.0.0"},
		{m: stdio("/usr/bin/npx", "--package=pkg@2.0.0", "bin"), pin: "pkg@2.0.0"},
		{m: stdio("bunx", "pkg@3.1.4"), pin: "pkg@3.1.4"},
		{m: stdio("uvx", "mcp-server-time==2026.8.18"), pin: "mcp-server-time==2026.8.18"},
		{m: stdio("uvx", "--python", "3.12", "--from", "pkg==1.0", "cmd"), pin: "pkg==1.0"},
		{m: stdio("pipx", "run", "pkg==1.0.1"), pin: "pkg==1.0.1"},
		{m: stdio("uvx", "pkg==1.0rc1"), pin: "pkg==1.0rc1"},
		{m: &Manifest{Transport: Transport{Type: "stdio", Command: "${INSTALL_DIR}/bin/server"}, Install: &Install{}}},
		{m: &Manifest{Transport: Transport{Type: "http", URL: "https://x"}}},
		{m: stdio("npx", "-y", "@scope/pkg"), problem: "write @scope/pkg@X.Y.Z"},
		{m: stdio("npx", "-y", "pkg@latest"), problem: "not pinned exactly"},
		{m: stdio("npx", "-y", "pkg@^1.2.3"), problem: "not pinned exactly"},
		{m: stdio("npx", "-y", "pkg@1.x"), problem: "not pinned exactly"},
		{m: stdio("npx", "-y"), problem: "runs no package"},
		{m: stdio("uvx", "pkg"), problem: "write pkg==X.Y.Z"},
		{m: stdio("uvx", "pkg>=1.0"), problem: "write pkg==X.Y.Z"},
		{m: stdio("uvx", "pkg==1.*"), problem: "not pinned exactly"},
		{m: stdio("uvx", "==1.0"), problem: "not pinned exactly"},
		{m: stdio("pipx", "install", "pkg==1"), problem: "pipx run"},
		{m: stdio("node", "server.js"), problem: "neither a pinned launcher"},
		{m: stdio("${INSTALL_DIR}/server"), problem: "no install block"},
		{m: &Manifest{Transport: Transport{Type: "stdio", Command: "npx", Args: []string{"pkg@1.0.0"}, Version: "1.0.1"}}, problem: "transport.version 1.0.1"},
	} {
		pins, problems := tc.m.Pins()
		var got []string
		for _, p := range pins {
			got = append(got, p.String())
		}
		line := tc.m.Transport.Command + " " + strings.Join(tc.m.Transport.Args, " ")
		switch {
		case tc.problem == "" && len(problems) > 0:
			t.Errorf("%s: problems %v", line, problems)
		case tc.problem != "" && (len(problems) != 1 || !strings.Contains(problems[0], tc.problem)):
			t.Errorf("%s: problems %v, want one with %q", line, problems, tc.problem)
		case tc.pin != "" && (len(got) != 1 || got[0] != tc.pin):
			t.Errorf("%s: pins %v, want %s", line, got, tc.pin)
		case tc.pin == "" && tc.problem == "" && len(got) > 0:
			t.Errorf("%s: pins %v, want none", line, got)
		}
	}
}

// TestShippedNPMPinsExist asks the npm registry for every npm package
// version the shipped catalog runs. With CI=true it never skips: npm
// missing, the registry unreachable or a version absent all fail.
func TestShippedNPMPinsExist(t *testing.T) {
	ci := os.Getenv("CI") == "true"
	var pins []Pin
	for _, m := range shipped(t).Entries {
		ps, _ := m.Pins()
		for _, p := range ps {
			if p.Registry == RegistryNPM {
				pins = append(pins, p)
			}
		}
	}
	if len(pins) == 0 {
		t.Fatal("the shipped catalog has no npm pin to check")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		if ci {
			t.Fatalf("npm is not installed; CI must install it (see .ci/run): %v", err)
		}
		t.Skipf("npm is not installed: %v", err)
	}
	for _, p := range pins {
		t.Run(p.String(), func(t *testing.T) {
			// A bound on a hung registry connection, not a timed assertion.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, npm, "view", p.String(), "version")
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_cache="+t.TempDir())
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			got := strings.TrimSpace(stdout.String())
			switch {
			case err == nil && got == p.Version:
			case err == nil:
				t.Fatalf("npm view %s version printed %q: the pinned version is not in the registry; pin one that is", p, got)
			case strings.Contains(stderr.String(), "E404"):
				t.Fatalf("npm view %s: the package is not in the registry: %s", p, lastLine(stderr.String()))
			case ci:
				t.Fatalf("npm view %s: %v: %s", p, err, lastLine(stderr.String()))
			default:
				t.Skipf("npm view %s: registry not reachable (%v: %s)", p, err, lastLine(stderr.String()))
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
