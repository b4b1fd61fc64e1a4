package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

const goodManifest = `manifest_version: 1
name: good
description: A good entry.
transport:
  type: http
  url: https://example.com/mcp
`

// writeEntry writes dir/<name>/manifest.yaml.
func writeEntry(t *testing.T, dir, name, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, ManifestFile), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadBuiltInByDefault(t *testing.T) {
	t.Setenv(EnvDir, "")
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != BuiltIn {
		t.Errorf("Source = %q, want %q", c.Source, BuiltIn)
	}
	if len(c.Entries) == 0 || len(c.Diagnostics) != 0 {
		t.Fatalf("built-in catalog: %d entries, diagnostics %v", len(c.Entries), c.Diagnostics)
	}
	for i := 1; i < len(c.Entries); i++ {
		if c.Entries[i-1].Name >= c.Entries[i].Name {
			t.Errorf("entries not sorted: %s before %s", c.Entries[i-1].Name, c.Entries[i].Name)
		}
	}
}

func TestLoadFolderFromEnv(t *testing.T) {
	dir := t.TempDir()
	writeEntry(t, dir, "good", goodManifest)
	writeEntry(t, dir, "future", "manifest_version: 7\nname: future\ndescription: Something  new.\nwhatever: {a: b}\n")
	writeEntry(t, dir, "broken", "manifest_version: 1\nname: broken\ntransport: {type: stdio, command: x}\n")
	writeEntry(t, dir, "other", strings.Replace(goodManifest, "name: good", "name: elsewhere", 1))
	writeEntry(t, dir, "bad name", goodManifest)
	writeEntry(t, dir, "notyaml", "manifest_version: [\n")
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("not an entry"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeEntry(t, dir, ".hidden", goodManifest)
	t.Setenv(EnvDir, dir)

	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != dir {
		t.Errorf("Source = %q, want %q", c.Source, dir)
	}
	if len(c.Entries) != 1 || c.Entries[0].Name != "good" {
		t.Fatalf("entries = %v, want only good", c.Entries)
	}
	want := map[string]string{
		"bad name": KindInvalid,
		"broken":   KindInvalid,
		"future":   KindFutureManifest,
		"notyaml":  KindInvalid,
		"other":    KindInvalid,
	}
	if len(c.Diagnostics) != len(want) {
		t.Fatalf("diagnostics = %+v, want %d", c.Diagnostics, len(want))
	}
	for i, d := range c.Diagnostics {
		if want[d.Entry] != d.Kind {
			t.Errorf("diagnostic %+v: want kind %q", d, want[d.Entry])
		}
		if i > 0 && c.Diagnostics[i-1].Entry > d.Entry {
			t.Errorf("diagnostics not sorted: %s before %s", c.Diagnostics[i-1].Entry, d.Entry)
		}
		if d.Message == "" || strings.Contains(d.Message, "\n") {
			t.Errorf("diagnostic %+v: want a one-line reason", d)
		}
		switch d.Entry {
		case "future":
			if d.Description != "Something new." {
				t.Errorf("future description = %q", d.Description)
			}
			if !strings.Contains(d.Warning(), "requires a newer Hermes") {
				t.Errorf("future warning = %q", d.Warning())
			}
		case "broken":
			if !strings.Contains(d.Message, "description") || !strings.Contains(d.Warning(), "invalid") {
				t.Errorf("broken: message %q, warning %q; want the missing description named", d.Message, d.Warning())
			}
		case "other":
			if !strings.Contains(d.Message, "does not match its folder") {
				t.Errorf("other: message %q", d.Message)
			}
		}
	}

	if _, err := c.Lookup("official/good"); err != nil {
		t.Errorf("Lookup(official/good): %v", err)
	}
	var le *LookupError
	if _, err := c.Lookup("future"); !errors.As(err, &le) || le.Diagnostic == nil || le.Diagnostic.Kind != KindFutureManifest {
		t.Errorf("Lookup(future) = %v, want a LookupError with the future diagnostic", err)
	}
	if _, err := c.Lookup("nope"); !errors.As(err, &le) || le.Diagnostic != nil || !strings.Contains(err.Error(), "hermes mcp catalog") {
		t.Errorf("Lookup(nope) = %v, want not-in-catalog", err)
	}
}

func TestLoadEnvNotAFolder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, filepath.Join(dir, "missing")} {
		t.Setenv(EnvDir, p)
		_, err := Load()
		if err == nil || !strings.Contains(err.Error(), EnvDir) || !strings.Contains(err.Error(), "unset it") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Load with %s=%s: %v; want a one-line error saying what to do", EnvDir, p, err)
		}
	}
}

func TestReadLimits(t *testing.T) {
	big := strings.Repeat("# padding\n", MaxManifestBytes/10+1) + goodManifest
	c, err := Read(fstest.MapFS{
		"good/manifest.yaml": {Data: []byte(big)},
		"dir/manifest.yaml":  {Mode: os.ModeDir},
	}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Entries) != 0 || len(c.Diagnostics) != 2 {
		t.Fatalf("entries %v, diagnostics %+v; want two invalid", c.Entries, c.Diagnostics)
	}
	if !strings.Contains(c.Diagnostics[1].Message, "limit") {
		t.Errorf("oversized manifest: %q", c.Diagnostics[1].Message)
	}
	if !strings.Contains(c.Diagnostics[0].Message, "not a regular file") {
		t.Errorf("manifest folder: %q", c.Diagnostics[0].Message)
	}
}
