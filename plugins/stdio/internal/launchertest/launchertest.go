// Package launchertest builds hermes-stdio-launcher for the tests that
// start servers in process: the plugin's code finds the launcher beside
// its own executable, which in a test is the test binary, so TestMain
// builds it there. It belongs to tests only.
package launchertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
)

// BuildBesideTest builds the launcher into the folder of the running test
// binary (go test's own temporary folder), as make build puts it beside
// the plugin. Call it from TestMain, before m.Run.
func BuildBesideTest() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the test binary: %w", err)
	}
	return Build(filepath.Dir(exe))
}

// Build builds the launcher into the folder dir (beside a plugin a test
// built there).
func Build(dir string) error {
	_, file, _, _ := runtime.Caller(0)
	pkg := filepath.Join(filepath.Dir(file), "..", "..", "cmd", launcher.Binary)
	out := filepath.Join(dir, launcher.Binary)
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = pkg
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s into %s: %v\n%s", launcher.Binary, out, err, b)
	}
	return nil
}
