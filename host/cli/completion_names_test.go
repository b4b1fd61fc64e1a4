package cli

import (
	"testing"
	"time"
)

// A tool name is offered on TAB only when it is 1 to 128 letters, digits,
// "_" and "-".
func TestCompletionToolNameRule(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"echo": true, "safe-tool_2": true, "A": true, "x": true,
		"": false, "a b": false, "a$(x)": false, "a`x`": false, "a;b": false, "a\nb": false, "a\rb": false,
		"a\x1b]2;t\x07": false, "*": false, "~root": false, "$HOME": false, "t\u00f6\u00f6l": false, "a.b": false,
		"a:b": false, "a=b": false, "'q'": false, `"q"`: false, `a\b`: false,
	} {
		if got := completionToolRE.MatchString(name); got != ok {
			t.Errorf("offer %q = %v, want %v", name, got, ok)
		}
	}
	long := make([]byte, 129)
	for i := range long {
		long[i] = 'v'
	}
	if completionToolRE.Match(long) || !completionToolRE.Match(long[:128]) {
		t.Errorf("the bound on a tool name offered is not 128")
	}
}

// HERMES_COMPLETION_TIMEOUT takes seconds or a Go duration; 0 starts no
// server; anything else keeps the default.
func TestCompletionTimeoutEnv(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]time.Duration{
		"": CompletionToolsTimeout, "0": 0, "1.5": 1500 * time.Millisecond, "500ms": 500 * time.Millisecond,
		"60s": time.Minute, "-1": CompletionToolsTimeout, "soon": CompletionToolsTimeout, " 2 ": 2 * time.Second,
	} {
		getenv := func(k string) string {
			if k == completionTimeoutEnv {
				return v
			}
			return ""
		}
		if got := completionTimeout(getenv); got != want {
			t.Errorf("%s=%q: %v, want %v", completionTimeoutEnv, v, got, want)
		}
	}
}
