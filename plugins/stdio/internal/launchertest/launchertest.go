// Package launchertest builds the stdio plugin's helper binaries,
// hermes-stdio-launcher and hermes-stdio-proxy, for the tests that start
// servers in process: the plugin's code finds them beside its own
// executable, which in a test is the test binary, so TestMain builds them
// there. It belongs to tests only.
package launchertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/proxy"
	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
)

// BuildBesideTest builds the helpers into the folder of the running test
// binary (go test's own temporary folder), as make build puts them beside
// the plugin. Call it from TestMain, before m.Run.
func BuildBesideTest() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the test binary: %w", err)
	}
	return Build(filepath.Dir(exe))
}

// Build builds the helpers into the folder dir (beside a plugin a test
// built there), in one go build.
func Build(dir string) error {
	_, file, _, _ := runtime.Caller(0)
	cmds := filepath.Join(filepath.Dir(file), "..", "..", "cmd")
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./"+launcher.Binary, "./"+proxy.Binary)
	cmd.Dir = cmds
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s and %s into %s: %v\n%s", launcher.Binary, proxy.Binary, dir, err, b)
	}
	return nil
}
