package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// A glob is a pattern of a rule: `*` matches any run of characters (none
// included, `_` and `/` included), `?` matches exactly one character (one
// Unicode code point), and every other character matches itself, case
// sensitive. There is no escape and no character class: `[`, `]` and `\`
// are ordinary characters (unlike tools.include, which takes path.Match
// patterns), so a pattern means the same to whoever reads it.
type glob struct {
	pattern string
	// kind picks the cheap comparison a pattern allows.
	kind globKind
	// lit is the pattern without its trailing `*` (prefix), leading `*`
	// (suffix), or the pattern itself (exact).
	lit string
}

type globKind uint8

const (
	globExact  globKind = iota // no metacharacter: equality
	globAny                    // only stars: matches everything
	globPrefix                 // literal then one trailing star
	globSuffix                 // one leading star then literal
	globFull                   // anything else: the general matcher
)

// Limits of the patterns of a rule, so that a policy costs what its author
// expects: a pattern longer than MaxPatternBytes, or a list longer than
// MaxPatterns, is refused at Compile.
const (
	MaxPatternBytes = 512
	MaxPatterns     = 1000
)

// compileGlob checks pattern and picks its comparison.
func compileGlob(pattern string) (glob, error) {
	switch {
	case pattern == "":
		return glob{}, fmt.Errorf("an empty pattern matches nothing; write the name, or * for any")
	case len(pattern) > MaxPatternBytes:
		return glob{}, fmt.Errorf("a pattern of %d bytes is longer than the %d allowed", len(pattern), MaxPatternBytes)
	case !utf8.ValidString(pattern):
		return glob{}, fmt.Errorf("pattern %q is not valid UTF-8", pattern)
	}
	g := glob{pattern: pattern, kind: globFull}
	body := strings.Trim(pattern, "*")
	switch {
	case !strings.ContainsAny(pattern, "*?"):
		g.kind, g.lit = globExact, pattern
	case body == "" && !strings.Contains(pattern, "?"):
		g.kind = globAny
	case strings.ContainsAny(body, "*?"):
		// stars or ? inside: the general matcher
	case strings.HasSuffix(pattern, "*") && !strings.HasPrefix(pattern, "*"):
		g.kind, g.lit = globPrefix, body
	case strings.HasPrefix(pattern, "*") && !strings.HasSuffix(pattern, "*"):
		g.kind, g.lit = globSuffix, body
	}
	return g, nil
}

// match reports whether name matches the pattern.
func (g *glob) match(name string) bool {
	switch g.kind {
	case globExact:
		return name == g.lit
	case globAny:
		return true
	case globPrefix:
		return strings.HasPrefix(name, g.lit)
	case globSuffix:
		return strings.HasSuffix(name, g.lit)
	}
	return matchGlob(g.pattern, name)
}

// matchGlob is the general matcher: the greedy algorithm that remembers
// the last star and retries from one character further on a mismatch. It
// takes O(len(pattern)·len(name)) steps at worst, never exponential time,
// and allocates nothing.
func matchGlob(pattern, name string) bool {
	p, n := 0, 0
	starP, starN := -1, 0
	for n < len(name) {
		if p < len(pattern) {
			switch c := pattern[p]; c {
			case '*':
				starP, starN = p, n
				p++
				continue
			case '?':
				_, size := utf8.DecodeRuneInString(name[n:])
				p++
				n += size
				continue
			default:
				if c == name[n] {
					p++
					n++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last star take one more character and retry.
		_, size := utf8.DecodeRuneInString(name[starN:])
		starN += size
		p, n = starP+1, starN
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// globs is the list of one selector of a rule; empty matches any value.
type globs []glob

func compileGlobs(field string, patterns []string) (globs, error) {
	if len(patterns) > MaxPatterns {
		return nil, fmt.Errorf("%s: %d patterns, more than the %d allowed", field, len(patterns), MaxPatterns)
	}
	out := make(globs, 0, len(patterns))
	for i, p := range patterns {
		g, err := compileGlob(p)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// first returns the index of the first pattern name matches, or -1.
func (gs globs) first(name string) int {
	for i := range gs {
		if gs[i].match(name) {
			return i
		}
	}
	return -1
}

// firstOf returns the first of names that a pattern matches, and that
// pattern's index; -1 when none does.
func (gs globs) firstOf(names []string) (name string, pattern int) {
	for _, n := range names {
		if i := gs.first(n); i >= 0 {
			return n, i
		}
	}
	return "", -1
}
