package toolview

import "testing"

func TestFilterAllows(t *testing.T) {
	tests := []struct {
		name   string
		filter Filter
		allow  []string
		deny   []string
	}{
		{"zero value allows all", Filter{}, []string{"a", "", "x/y"}, nil},
		{"include only", Filter{Include: []string{"read_file", "write-file"}},
			[]string{"read_file", "write-file"}, []string{"write_file", "delete", "READ_FILE"}},
		{"exclude only", Filter{Exclude: []string{"delete"}},
			[]string{"read", "Delete"}, []string{"delete"}},
		{"include wins over exclude", Filter{Include: []string{"a", "b"}, Exclude: []string{"a", "c"}},
			[]string{"a", "b"}, []string{"c", "d"}},
		{"exclude glob", Filter{Exclude: []string{"*_radar_*"}},
			[]string{"radar", "get_radar", "zones_list"}, []string{"get_radar_stats", "x_radar_"}},
		{"include glob and exact", Filter{Include: []string{"read_*", "stat"}},
			[]string{"read_file", "read_", "stat"}, []string{"Read_file", "stats", "xread_file"}},
		{"question mark", Filter{Include: []string{"v?"}},
			[]string{"v1", "vé"}, []string{"v", "v12"}},
		{"class and range", Filter{Include: []string{"tool_[a-c0-9]"}},
			[]string{"tool_a", "tool_c", "tool_7"}, []string{"tool_d", "tool_A", "tool_ab"}},
		{"negated class", Filter{Exclude: []string{"x[!0-9]"}},
			[]string{"x1", "x", "xab"}, []string{"xa", "x_"}},
		{"star crosses slash", Filter{Include: []string{"repos/*"}},
			[]string{"repos/list", "repos/a/b"}, []string{"repo/list"}},
		{"unterminated bracket is literal", Filter{Include: []string{"a[b"}},
			[]string{"a[b"}, []string{"ab", "a"}},
		{"bracket first in class is literal", Filter{Include: []string{"[]x]"}},
			[]string{"]", "x"}, []string{"[", "y"}},
		{"exact entry with glob chars matches literally first", Filter{Include: []string{"weird*name"}},
			[]string{"weird*name", "weirdXname"}, []string{"weird"}},
		{"case sensitive glob", Filter{Include: []string{"Get*"}},
			[]string{"GetUser"}, []string{"getUser"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range tt.allow {
				if !tt.filter.Allows(n) {
					t.Errorf("Allows(%q) = false, want true", n)
				}
			}
			for _, n := range tt.deny {
				if tt.filter.Allows(n) {
					t.Errorf("Allows(%q) = true, want false", n)
				}
			}
		})
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*", "", true},
		{"*", "anything/at/all", true},
		{"**", "x", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbY", false},
		{"*x", "xxxx", true},
		{"?", "", false},
		{"?", "é", true},
		{"[a-]", "-", true},
		{"[!a]", "a", false},
		{"[z-a]", "m", false},
		{"[", "[", true},
		{"a[", "a[", true},
		{"a[", "a", false},
		{"*[", "xx[", true},
		{"\\*", "\\x", true},
	}
	for _, tt := range tests {
		if got := GlobMatch(tt.pattern, tt.name); got != tt.want {
			t.Errorf("GlobMatch(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestFilterDescribe(t *testing.T) {
	tests := []struct {
		f    Filter
		want string
	}{
		{Filter{}, "all"},
		{Filter{Include: []string{"a", "b", "c"}}, "3 selected"},
		{Filter{Exclude: []string{"a", "b"}}, "-2 excluded"},
		{Filter{Include: []string{"a"}, Exclude: []string{"b"}}, "1 selected"},
	}
	for _, tt := range tests {
		if got := tt.f.Describe(); got != tt.want {
			t.Errorf("%+v.Describe() = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func FuzzGlobMatch(f *testing.F) {
	f.Add("a*b?[c-d]", "axxbyc")
	f.Add("[!", "[!")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		got := GlobMatch(pattern, name)
		if !IsGlob(pattern) && got != (pattern == name) {
			t.Fatalf("literal pattern %q vs %q: %v", pattern, name, got)
		}
		if pattern == "*" && !got {
			t.Fatalf("* did not match %q", name)
		}
	})
}
