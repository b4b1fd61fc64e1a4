package sandbox

import (
	"fmt"
	"os"
	"testing"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/launchertest"
)

// TestMain builds hermes-stdio-launcher beside the test binary, where
// launcherPath finds it, as make build puts it beside the plugin.
func TestMain(m *testing.M) {
	if err := launchertest.BuildBesideTest(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
