package lazyregexp

import (
	"regexp"
	"testing"
)

func TestMethodsMatchRegexp(t *testing.T) {
	const expr = `([a-z]+)=([0-9]+)`
	l, re := New(expr), regexp.MustCompile(expr)
	s := "a=1 bad b=22"
	if l.String() != expr {
		t.Errorf("String() = %q, want %q", l.String(), expr)
	}
	if l.MatchString(s) != re.MatchString(s) || l.Match([]byte("x")) != re.Match([]byte("x")) {
		t.Error("Match/MatchString differ from regexp's")
	}
	if got, want := l.FindStringSubmatch(s), re.FindStringSubmatch(s); len(got) != 3 || got[2] != want[2] {
		t.Errorf("FindStringSubmatch = %q, want %q", got, want)
	}
	if got, want := len(l.FindAllStringIndex(s, -1)), len(re.FindAllStringIndex(s, -1)); got != want || got != 2 {
		t.Errorf("FindAllStringIndex found %d, want %d", got, want)
	}
	if got, want := l.ReplaceAllString(s, "<$1>"), re.ReplaceAllString(s, "<$1>"); got != want {
		t.Errorf("ReplaceAllString = %q, want %q", got, want)
	}
	up := func(string) string { return "X" }
	if got, want := l.ReplaceAllStringFunc(s, up), re.ReplaceAllStringFunc(s, up); got != want {
		t.Errorf("ReplaceAllStringFunc = %q, want %q", got, want)
	}
	if l.Regexp() != l.Regexp() {
		t.Error("Regexp() compiled twice")
	}
}

// A bad expression panics when it is declared in a test binary, as
// regexp.MustCompile at package level did, so tests find it at once.
func TestBadExpressionPanicsInTests(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New with a bad expression did not panic in a test binary")
		}
	}()
	New(`(`)
}

// Outside a test binary nothing is compiled before first use.
func TestNotCompiledBeforeUse(t *testing.T) {
	inTest = false
	defer func() { inTest = true }()
	compiled := false
	r := New(`(`)
	defer func() {
		if recover() == nil || !compiled {
			t.Fatal("a bad expression did not panic on first use")
		}
	}()
	compiled = true
	r.MatchString("x")
}
