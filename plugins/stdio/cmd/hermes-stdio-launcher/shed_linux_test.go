package main

import (
	"os"
	"strings"
	"testing"
)

// TestReadOnlyMapping: the lines of /proc/self/maps naming the executable
// without write permission are the spans shed; anything else, malformed
// lines included, is not.
func TestReadOnlyMapping(t *testing.T) {
	exe := []byte("/opt/hermes/bin/hermes-stdio-launcher")
	cases := []struct {
		line string
		want span
		ok   bool
	}{
		{"00400000-0049f000 r-xp 00000000 fe:00 10027984                           /opt/hermes/bin/hermes-stdio-launcher", span{0x400000, 0x49f000}, true},
		{"0049f000-00579000 r--p 0009f000 fe:00 10027984 /opt/hermes/bin/hermes-stdio-launcher", span{0x49f000, 0x579000}, true},
		{"00579000-00583000 rw-p 00179000 fe:00 10027984 /opt/hermes/bin/hermes-stdio-launcher", span{}, false},
		{"00583000-005b9000 rw-p 00000000 00:00 0 ", span{}, false},
		{"7fb13a117000-7fb13a119000 r-xp 00000000 00:00 0 [vdso]", span{}, false},
		{"00400000-0049f000 r-xp 00000000 fe:00 1 /opt/hermes/bin/other/hermes-stdio-launcher", span{}, false},
		{"00400000-0049f000 r-xp 00000000 fe:00 1 x/opt/hermes/bin/hermes-stdio-launcher", span{}, false},
		{"0049f000-00400000 r--p 0 fe:00 1 /opt/hermes/bin/hermes-stdio-launcher", span{}, false},
		{"zz-00579000 r--p 0 fe:00 1 /opt/hermes/bin/hermes-stdio-launcher", span{}, false},
		{"/opt/hermes/bin/hermes-stdio-launcher", span{}, false},
		{" /opt/hermes/bin/hermes-stdio-launcher", span{}, false},
		{"", span{}, false},
	}
	for _, c := range cases {
		got, ok := readOnlyMapping([]byte(c.line), exe)
		if ok != c.ok || got != c.want {
			t.Errorf("readOnlyMapping(%q) = %v, %v; want %v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

// TestOwnCode: this test binary's own code and read-only data are found.
func TestOwnCode(t *testing.T) {
	spans := ownCode()
	if len(spans) == 0 {
		maps, _ := os.ReadFile("/proc/self/maps")
		t.Fatalf("no read-only mapping of the executable found in:\n%s", strings.SplitN(string(maps), "\n", 6))
	}
	for _, s := range spans {
		if s.end <= s.start {
			t.Errorf("span %#x-%#x is empty", s.start, s.end)
		}
	}
}

// FuzzReadOnlyMapping: no line panics the parser, and a span it reports
// is never empty.
func FuzzReadOnlyMapping(f *testing.F) {
	f.Add([]byte("00400000-0049f000 r-xp 00000000 fe:00 1 /x"))
	f.Add([]byte("-/x"))
	f.Add([]byte(" /x"))
	f.Fuzz(func(t *testing.T, line []byte) {
		if s, ok := readOnlyMapping(line, []byte("/x")); ok && s.end <= s.start {
			t.Fatalf("empty span from %q", line)
		}
	})
}
