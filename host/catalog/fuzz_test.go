package catalog

import (
	"errors"
	"io/fs"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	optionalmcps "github.com/hermes-agent/hermes/optional-mcps"
)

// FuzzParse feeds the manifest parser arbitrary files, seeded with every
// shipped manifest and a few edge cases. Parse must never panic; an error
// is one line that names what to fix, and stays within a bound however
// big the input; the same input always gives the same answer; and a
// manifest it accepts is one hermes can use: a valid name and a
// one-line description, and Pins, Translate and Plan work on it.
func FuzzParse(f *testing.F) {
	entries, err := fs.ReadDir(optionalmcps.FS(), ".")
	if err != nil {
		f.Fatal(err)
	}
	for _, d := range entries {
		src, err := fs.ReadFile(optionalmcps.FS(), path.Join(d.Name(), ManifestFile))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, s := range []string{
		"",
		"manifest_version: 2\nname: x\ndescription: newer\n",
		"manifest_version: 1\nname: a\ndescription: d\ntransport: {type: stdio, command: npx, args: [\"-y\", \"p@1.0.0\"]}\nsandbox: {network: [a.example], writable: [\"${INSTALL_DIR}/x\"]}\n",
		"manifest_version: 1\nname: a\ndescription: d\ntransport: {type: stdio, command: \"${INSTALL_DIR}/bin\"}\ninstall: {type: git, url: \"https://example.com/r.git\", ref: 0123456789abcdef0123456789abcdef01234567}\nplugin: {kind: transport, name: x, path: bin/x}\n",
		"manifest_version: 1\nname: a\ndescription: d\ntransport: {type: http, url: \"https://x\", headers: {X-K: \"${K}\"}}\nauth: {type: api_key, env: [{name: K}]}\n",
		"a: &a [*a, *a]\nb: *a\n",
		"manifest_version: 1\n\tname: x\n",
		"[1, 2]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := Parse(src)
		_, err2 := Parse(src)
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("two parses disagree: %v / %v", err, err2)
		}
		if err != nil {
			if m != nil {
				t.Fatalf("Parse returned a manifest and the error %v", err)
			}
			msg := err.Error()
			if msg == "" || strings.ContainsAny(msg, "\n\r") || len(msg) > 8<<10 {
				t.Fatalf("error is not one bounded line (%d bytes): %q", len(msg), msg)
			}
			var fe *FutureError
			var pe *Error
			switch {
			case errors.As(err, &fe):
				if fe.Version <= ManifestVersion {
					t.Fatalf("FutureError for version %d", fe.Version)
				}
				if strings.ContainsAny(fe.Description, "\n\r") || len(fe.Description) > MaxDescriptionLen {
					t.Fatalf("future description %q", fe.Description)
				}
			case !errors.As(err, &pe):
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if m == nil {
			t.Fatal("Parse returned neither a manifest nor an error")
		}
		if !nameRE.MatchString(m.Name) || len(m.Name) > MaxNameLen {
			t.Fatalf("accepted name %q", m.Name)
		}
		if m.Description == "" || strings.ContainsAny(m.Description, "\n\r") || !utf8.ValidString(m.Description) {
			t.Fatalf("accepted description %q", m.Description)
		}
		if m.Transport.Type != "stdio" && m.Transport.Type != "http" {
			t.Fatalf("accepted transport.type %q", m.Transport.Type)
		}
		m.Pins()
		opts := TranslateOptions{InstallDir: "/nonexistent/mcp-installs/" + m.Name}
		if m.Plugin != nil && m.Plugin.SHA256 == "" {
			opts.PluginSHA256 = strings.Repeat("ab", 32)
		}
		if _, err := Translate(m, opts); err != nil {
			t.Fatalf("Parse accepted a manifest Translate refuses: %v", err)
		}
		p, err := m.Plan(opts)
		if err != nil {
			t.Fatalf("Parse accepted a manifest Plan refuses: %v", err)
		}
		p.Lines()
	})
}
