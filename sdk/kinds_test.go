package sdk

import (
	"testing"

	"github.com/hermes-agent/hermes/sdk/internal/serve"
)

// The public names of the contract's constants are the ones the plugin's
// serving code uses.
func TestConstantsAgree(t *testing.T) {
	if StreamFDEnv != serve.StreamFDEnv || DefaultShutdownGrace != serve.DefaultShutdownGrace {
		t.Fatal("sdk's constants and internal/serve's disagree")
	}
	for _, k := range []string{"PLUGIN_MIN_PORT", serve.MagicCookieKey, StreamFDEnv, "GOMAXPROCS"} {
		if !HostEnv(k) {
			t.Errorf("HostEnv(%q) = false", k)
		}
	}
	if HostEnv("HOME") {
		t.Error("HostEnv(HOME) = true")
	}
}
