package config

import (
	"reflect"
	"strings"
	"testing"
)

func lookupMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestInterpolate(t *testing.T) {
	vars := lookupMap(map[string]string{"A": "1", "B.c-d": "dots", "EMPTY": ""})
	cases := []struct {
		in, out string
		missing []string
	}{
		{"plain", "plain", nil},
		{"${A}", "1", nil},
		{"x${A}y${A}", "x1y1", nil},
		{"${env:A}", "1", nil},
		{"${ env:A }", "1", nil},
		{"${B.c-d}", "dots", nil},
		{"${NOPE:-def}", "def", nil},
		{"${A:-def}", "1", nil},
		{"${EMPTY:-def}", "", nil},
		{"${NOPE:-}", "", nil},
		{"${NOPE:-a:-b}", "a:-b", nil},
		{"${env:NOPE:-d}", "d", nil},
		{"${NOPE}", "${NOPE}", []string{"NOPE"}},
		{"${X}${Y}${X}", "${X}${Y}${X}", []string{"X", "Y"}},
		{"$${A}", "${A}", nil},
		{"$$${A}", "$${A}", nil},
		{"$A ${}", "$A ${}", nil},
		{"${A", "${A", nil},
		{"cost: $5", "cost: $5", nil},
	}
	for _, c := range cases {
		out, missing := Interpolate(c.in, vars)
		if out != c.out || !reflect.DeepEqual(missing, c.missing) {
			t.Errorf("Interpolate(%q) = %q, %q; want %q, %q", c.in, out, missing, c.out, c.missing)
		}
	}
}

func FuzzInterpolate(f *testing.F) {
	for _, s := range []string{"", "${A}", "$${A}", "${A:-b}", "${env:A}", "a$b", "${", "}${}", "${NOPE}x"} {
		f.Add(s)
	}
	vars := lookupMap(map[string]string{"A": "1", "B": "${A}"})
	f.Fuzz(func(t *testing.T, s string) {
		out, missing := Interpolate(s, vars)
		if !strings.Contains(s, "${") && (out != s || missing != nil) {
			t.Fatalf("%q changed to %q", s, out)
		}
		for _, m := range missing {
			if !strings.Contains(s, m) {
				t.Fatalf("missing name %q not in input %q", m, s)
			}
		}
	})
}
