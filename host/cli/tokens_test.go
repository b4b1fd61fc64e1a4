package cli_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Token files map one-to-one to server names: removing '_a' (or 'a_')
// leaves the tokens of 'a' alone, and removing 'a' leaves theirs.
func TestRemoveTokensAreThisServersOnly(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  a:\n    url: https://a.example/mcp\n  _a:\n    url: https://b.example/mcp\n  a_:\n    url: https://c.example/mcp\n")
	dir := filepath.Join(home, "mcp-tokens")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, s := range []string{"a", "_a", "a_"} {
		for _, ext := range []string{".json", ".client.json", ".meta.json"} {
			all = append(all, s+ext)
			if err := os.WriteFile(filepath.Join(dir, s+ext), []byte(`{"server":"`+s+`"}`), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	left := func() []string {
		ents, _ := os.ReadDir(dir)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		slices.Sort(names)
		return names
	}
	without := func(names []string, server string) []string {
		return slices.DeleteFunc(slices.Clone(names), func(n string) bool {
			return n == server+".json" || n == server+".client.json" || n == server+".meta.json"
		})
	}
	want := slices.Sorted(slices.Values(all))

	r := runHermes(t, home, "mcp", "remove", "_a", "--yes").must(t, 0)
	if r.stdout != "  ✓ Removed '_a' from config\n  ✓ Cleaned up OAuth tokens\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	want = without(want, "_a")
	if got := left(); !slices.Equal(got, want) {
		t.Fatalf("after removing _a, token files are %q, want %q", got, want)
	}
	runHermes(t, home, "mcp", "remove", "a", "--yes").must(t, 0)
	want = without(want, "a")
	if got := left(); !slices.Equal(got, want) {
		t.Fatalf("after removing a, token files are %q, want %q", got, want)
	}
}
