package sandbox

import (
	"testing"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
)

// The seccomp policy assembles for this architecture.
func TestSeccompPolicyAssembles(t *testing.T) {
	for _, mode := range []string{launcher.NetworkAll, launcher.NetworkNone, launcher.NetworkHosts} {
		fs, err := seccompFilters(mode)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if len(fs) != 2 || len(fs[0]) == 0 || len(fs[1]) == 0 {
			t.Fatalf("%s: filters %v", mode, fs)
		}
	}
}
