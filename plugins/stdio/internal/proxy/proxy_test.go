package proxy

import (
	"slices"
	"testing"
)

// The arguments read back as written, and a proxy of another build says
// so instead of serving a list it misreads.
func TestArgs(t *testing.T) {
	for _, hosts := range [][]string{nil, {"a.example"}, {"*.b.example:443", "[::1]", "-x"}} {
		name, level, got, err := ParseArgs(Args("stdio.s.proxy", "debug", hosts))
		if err != nil || name != "stdio.s.proxy" || level != "debug" || len(got) != len(hosts) || !slices.Equal(got, hosts) && len(hosts) > 0 {
			t.Errorf("Args(%q) read back as %q %q %q %v", hosts, name, level, got, err)
		}
	}
	for _, args := range [][]string{nil, {"a.example"}, {"hermes-stdio-proxy/0", "n", "debug", "a.example"}, {argsVersion, "n"}} {
		if _, _, _, err := ParseArgs(args); err == nil {
			t.Errorf("ParseArgs(%q) accepted", args)
		}
	}
}
