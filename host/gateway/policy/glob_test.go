package policy

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"mcp_github_*", "mcp_github_create_issue", true},
		{"mcp_github_*", "mcp_github_", true},
		{"mcp_github_*", "mcp_gitlab_x", false},
		{"*_delete_*", "mcp_github_delete_repo", true},
		{"*_delete_*", "mcp_github_delete", false},
		{"*", "", true},
		{"**", "anything", true},
		{"?", "é", true},
		{"?", "ab", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*.example.com", "alice.example.com", true},
		{"*@example.com", "alice@example.org", false},
		{"[a]", "[a]", true},
		{"[a]", "a", false},
		{`a\*`, `a\bc`, true},
		{"Alice", "alice", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"*a*a*a*a*a*b", strings.Repeat("a", 200), false},
	} {
		g, err := compileGlob(c.pattern)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if got := g.match(c.name); got != c.want {
			t.Errorf("%q against %q: %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
	for _, bad := range []string{"", strings.Repeat("a", MaxPatternBytes+1), "\xff"} {
		if _, err := compileGlob(bad); err == nil {
			t.Errorf("%q compiled", bad)
		}
	}
}

// globRegexp is the meaning of a pattern written as a regular expression:
// the reference the matcher is checked against.
func globRegexp(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`)$`)
	return regexp.MustCompile(b.String())
}

func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"mcp_github_*", "mcp_github_x"}, {"*_delete_*", "mcp_a_delete_b"}, {"a?c", "abc"},
		{"*", ""}, {"?é*", "xé"}, {"*a*", "bab"}, {"[*]", "[x]"}, {"ab*", "a"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		g, err := compileGlob(pattern)
		if err != nil {
			if pattern != "" && len(pattern) <= MaxPatternBytes && utf8.ValidString(pattern) {
				t.Fatalf("%q refused: %v", pattern, err)
			}
			return
		}
		want := globRegexp(pattern).MatchString(name)
		if got := g.match(name); got != want {
			t.Fatalf("%q against %q: %v, the regexp says %v", pattern, name, got, want)
		}
		if got := matchGlob(pattern, name); got != want {
			t.Fatalf("general matcher: %q against %q: %v, want %v", pattern, name, got, want)
		}
	})
}
