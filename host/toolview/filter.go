package toolview

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Filter is a server's tools block: which of its tools the model may see.
// Entries are original (unsanitized) MCP tool names or, when they contain
// '*', '?' or '[', case-sensitive shell-style globs with fnmatch semantics:
// '*' matches any run of characters (including '/'), '?' any one character,
// "[...]" a character class with ranges and '!' for negation.
//
// A non-empty Include lists the only allowed tools and Exclude is then
// ignored (include wins); otherwise Exclude lists the tools that are not
// allowed. The zero Filter allows everything.
type Filter struct {
	Include []string
	Exclude []string
}

// Allows reports whether the tool with the given original name passes the
// filter. A tool that does not pass does not exist for the model: it is
// neither listed nor callable.
func (f Filter) Allows(tool string) bool {
	if len(f.Include) > 0 {
		return matchesAny(tool, f.Include)
	}
	if len(f.Exclude) > 0 {
		return !matchesAny(tool, f.Exclude)
	}
	return true
}

// Describe summarises the filter for a listing: "all", "N selected" (an
// include list of N entries) or "-N excluded" (an exclude list of N
// entries).
func (f Filter) Describe() string {
	switch {
	case len(f.Include) > 0:
		return fmt.Sprintf("%d selected", len(f.Include))
	case len(f.Exclude) > 0:
		return fmt.Sprintf("-%d excluded", len(f.Exclude))
	default:
		return "all"
	}
}

// matchesAny checks exact membership first, then the glob entries.
func matchesAny(name string, patterns []string) bool {
	for _, p := range patterns {
		if p == name {
			return true
		}
	}
	for _, p := range patterns {
		if IsGlob(p) && GlobMatch(p, name) {
			return true
		}
	}
	return false
}

// IsGlob reports whether a filter entry is a glob rather than an exact name:
// it contains '*', '?' or '['.
func IsGlob(pattern string) bool {
	return strings.ContainsAny(pattern, "*?[")
}

// GlobMatch reports whether name matches pattern with fnmatch semantics
// (case-sensitive; '/' is an ordinary character; no backslash escapes; an
// unterminated '[' matches itself). It never fails: every pattern is valid.
func GlobMatch(pattern, name string) bool {
	px, nx := 0, 0
	// Position to resume from after the last '*': the pattern index just
	// past the star and the name index the star has consumed up to.
	starP, starN := -1, 0
	for nx < len(name) {
		if px < len(pattern) {
			switch pattern[px] {
			case '*':
				starP, starN = px+1, nx
				px++
				continue
			case '?':
				_, w := utf8.DecodeRuneInString(name[nx:])
				px++
				nx += w
				continue
			case '[':
				r, w := utf8.DecodeRuneInString(name[nx:])
				if matched, next, ok := matchClass(pattern, px, r); ok {
					if matched {
						px = next
						nx += w
						continue
					}
				} else if name[nx] == '[' {
					// Unterminated class: '[' is literal.
					px++
					nx++
					continue
				}
			default:
				_, pw := utf8.DecodeRuneInString(pattern[px:])
				_, nw := utf8.DecodeRuneInString(name[nx:])
				if pattern[px:px+pw] == name[nx:nx+nw] {
					px += pw
					nx += nw
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last star swallow one more character and retry.
		_, w := utf8.DecodeRuneInString(name[starN:])
		starN += w
		px, nx = starP, starN
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}

// matchClass matches r against the class starting at pattern[start] == '['.
// It returns whether r is in the class, the index just past the closing ']',
// and ok false when the class is unterminated.
func matchClass(pattern string, start int, r rune) (matched bool, next int, ok bool) {
	i := start + 1
	negate := false
	if i < len(pattern) && pattern[i] == '!' {
		negate = true
		i++
	}
	first := true
	for i < len(pattern) {
		if pattern[i] == ']' && !first {
			return matched != negate, i + 1, true
		}
		first = false
		lo, w := utf8.DecodeRuneInString(pattern[i:])
		i += w
		hi := lo
		if i+1 < len(pattern) && pattern[i] == '-' && pattern[i+1] != ']' {
			var w2 int
			hi, w2 = utf8.DecodeRuneInString(pattern[i+1:])
			i += 1 + w2
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
	return false, 0, false
}
