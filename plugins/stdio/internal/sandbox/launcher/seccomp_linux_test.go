package launcher

import "testing"

// The seccomp policy assembles for this architecture.
func TestSeccompPolicyAssembles(t *testing.T) {
	for _, mode := range []string{NetworkAll, NetworkNone, NetworkHosts} {
		p := seccompPolicy(mode)
		if _, err := p.Assemble(); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
	}
	if _, err := archFilter(); err != nil {
		t.Fatal(err)
	}
}
