package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
)

func FuzzLoad(f *testing.F) {
	for _, name := range []string{"input.yaml", "tools_only.yaml", "model_only.yaml", "null_servers.yaml", "empty_flow.yaml", "no_newline.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("mcp_servers:\n  a:\n    command: x\n    enabled: \"no\"\n    tools: {include: a}\n"))
	f.Add([]byte("mcp_servers: ~\n"))
	f.Add([]byte("- a\n- b\n"))
	// The sandbox: and plugin: blocks a catalog install writes.
	f.Add([]byte("mcp_servers:\n  s:\n    command: npx\n    sandbox:\n      writable: [~/notes]\n      deny_read: [~/.ssh]\n      network: [\"*.example.com\", \"127.0.0.1:8080\"]\n      limits: {memory: 1G, cpu_seconds: 60, open_files: 256, processes: 64}\n      enforce: false\n    plugin: {kind: transport, name: x, path: /opt/x/hermes-transport-x, sha256: \"" + strings.Repeat("ab", 32) + "\"}\n"))
	f.Add([]byte("mcp_servers:\n  s:\n    command: x\n    sandbox: {network: none, limits: {memory: 0}}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		h := t.TempDir()
		path := filepath.Join(h, File)
		if err := os.WriteFile(path, src, 0o600); err != nil {
			t.Fatal(err)
		}
		_, _ = Load(h) // must not panic
		if _, err := newDocument(path, src); err != nil {
			return
		}
		// A round trip that changes nothing leaves the bytes identical.
		if err := Edit(h, func(d *Document) error { _ = d.Names(); return nil }); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != string(src) {
			t.Fatalf("no-op edit changed the file:\n%q\n%q", src, got)
		}
		// Edits either fail cleanly or leave a parsable file with the change.
		d, _ := newDocument(path, src)
		for _, n := range d.Names() {
			_ = d.SetEnabled(n, false)
			_ = d.SetToolsFilter(n, []string{"x"}, nil)
			_ = d.SetToolsFilter(n, nil, nil)
		}
		if err := d.SetServer("fuzz_new", NewServerEntry().Command("c", "a b").Env("K", "${V}")); err == nil {
			if !d.Has("fuzz_new") {
				t.Fatalf("added server missing:\n%s", d.src)
			}
			if _, err := parseFile(path, d.src); err != nil {
				t.Fatalf("edit produced invalid YAML: %v", err)
			}
			if !d.RemoveServer("fuzz_new") || d.Has("fuzz_new") {
				t.Fatalf("remove failed:\n%s", d.src)
			}
		}
	})
}

func FuzzQuoteScalar(f *testing.F) {
	for _, s := range []string{"", "a", "true", "1", "-1", "- a", "a: b", "#x", "Bearer ${X}", "it's", "x\ny", "\x00", "~", "[a]", "{a}", "@x", "%x", "a #b", "0x1F", ".5", "> x", "|", "*a", "&a", "!t", "? x", "--port"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("YAML text is UTF-8; other bytes cannot round-trip")
		}
		var b strings.Builder
		emitKV(&b, 0, "k", Map{{"v", s}, {"l", []string{s}}})
		var got struct {
			K struct {
				V string   `yaml:"v"`
				L []string `yaml:"l"`
			} `yaml:"k"`
		}
		if err := yaml.Unmarshal([]byte(b.String()), &got); err != nil {
			t.Fatalf("%q: %v\n%s", s, err, b.String())
		}
		if got.K.V != s || len(got.K.L) != 1 || got.K.L[0] != s {
			t.Fatalf("%q read back as %q / %q from\n%s", s, got.K.V, got.K.L, b.String())
		}
	})
}
