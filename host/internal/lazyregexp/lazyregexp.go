// Package lazyregexp holds regular expressions that are compiled on first
// use instead of at package initialisation, so that a process pays for an
// expression only if it matches with it: every hermes command and plugin
// links packages whose expressions it never runs, and compiling them all at
// start cost milliseconds before main.
//
// A Regexp is declared where a *regexp.Regexp was
// (var nameRE = lazyregexp.New(`^[a-z]+$`)) and has the methods of
// *regexp.Regexp that hermes calls, so call sites stay as they were. In a
// test binary the expression is compiled at once, so a bad expression still
// panics when the package's tests start, as regexp.MustCompile did.
package lazyregexp

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

// Regexp is a regular expression compiled by regexp.MustCompile the first
// time it is used. It is safe for concurrent use.
type Regexp struct {
	expr string
	re   func() *regexp.Regexp
}

// New returns expr to be compiled on first use. expr must be valid: a bad
// one panics on first use (at once in a test binary).
func New(expr string) *Regexp {
	r := &Regexp{expr: expr, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
	if inTest {
		r.re()
	}
	return r
}

// inTest is whether this process is a `go test` binary.
var inTest = len(os.Args) > 0 && strings.HasSuffix(strings.TrimSuffix(os.Args[0], ".exe"), ".test")

// Regexp returns the compiled expression, compiling it on the first call.
func (r *Regexp) Regexp() *regexp.Regexp { return r.re() }

// String returns the source text of the expression, without compiling it.
func (r *Regexp) String() string { return r.expr }

// Match is regexp.Regexp.Match.
func (r *Regexp) Match(b []byte) bool { return r.re().Match(b) }

// MatchString is regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool { return r.re().MatchString(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.re().FindStringSubmatch(s) }

// FindAllStringIndex is regexp.Regexp.FindAllStringIndex.
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.re().FindAllStringIndex(s, n)
}

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.re().ReplaceAllString(src, repl)
}

// ReplaceAllStringFunc is regexp.Regexp.ReplaceAllStringFunc.
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.re().ReplaceAllStringFunc(src, repl)
}
