package proxy

import "testing"

func TestAllowList(t *testing.T) {
	a, err := NewAllowList([]string{"api.example.com", "*.cdn.example.org", "git.example.net:443", "127.0.0.1:8080", "[::1]", "Upper.Example.COM."})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host string
		port int
		want bool
	}{
		{"api.example.com", 443, true},
		{"api.example.com", 80, true},
		{"x.api.example.com", 443, false},
		{"example.com", 443, false},
		{"a.cdn.example.org", 443, true},
		{"a.b.cdn.example.org", 80, true},
		{"cdn.example.org", 443, false},
		{"evilcdn.example.org", 443, false},
		{"git.example.net", 443, true},
		{"git.example.net", 22, false},
		{"127.0.0.1", 8080, true},
		{"127.0.0.1", 8081, false},
		{"::1", 9, true},
		{"upper.example.com", 1, true},
	} {
		if _, got := a.Allows(c.host, c.port); got != c.want {
			t.Errorf("Allows(%q, %d) = %v, want %v", c.host, c.port, got, c.want)
		}
	}
	for _, bad := range []string{"", "*.1.2.3.4", "a b", "exa_mple..com", "host:0", "host:99999", "host:", "[::1", "::1", "*.", "http://x"} {
		if _, err := ParsePattern(bad); err == nil {
			t.Errorf("ParsePattern(%q) accepted", bad)
		}
	}
	for _, s := range []string{"a.example", "*.a.example", "a.example:443", "[::1]:8080", "[::1]", "127.0.0.1"} {
		p, err := ParsePattern(s)
		if err != nil || p.String() != s {
			t.Errorf("ParsePattern(%q) = %v (%q), %v", s, p, p.String(), err)
		}
	}
}

func TestSplitTarget(t *testing.T) {
	for _, c := range []struct {
		in   string
		def  int
		host string
		port int
		bad  bool
	}{
		{in: "Example.COM.:443", host: "example.com", port: 443},
		{in: "example.com", def: 80, host: "example.com", port: 80},
		{in: "[::1]:8080", host: "::1", port: 8080},
		{in: "[0:0::1]", def: 80, host: "::1", port: 80},
		{in: "127.0.0.1:1", host: "127.0.0.1", port: 1},
		{in: "[fe80::1%eth0]:1", bad: true},
		{in: "a..b:1", bad: true},
		{in: "a:b:c", bad: true},
		{in: "a:0080", bad: true},
		{in: "a:+80", bad: true},
		{in: "a b:80", bad: true},
		{in: "", bad: true},
	} {
		h, p, err := SplitTarget(c.in, c.def)
		if c.bad {
			if err == nil {
				t.Errorf("SplitTarget(%q) = %q %d, want an error", c.in, h, p)
			}
			continue
		}
		if err != nil || h != c.host || p != c.port {
			t.Errorf("SplitTarget(%q) = %q %d %v, want %q %d", c.in, h, p, err, c.host, c.port)
		}
	}
}

// FuzzParsePattern: an entry that parses prints back to one that parses
// to the same pattern.
func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{"a.example", "*.a.example:443", "[::1]:80", "127.0.0.1", "A.B."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePattern(s)
		if err != nil {
			return
		}
		q, err := ParsePattern(p.String())
		if err != nil || q != p {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, p, p.String(), q, err)
		}
	})
}
