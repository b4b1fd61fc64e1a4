// Package testbin builds the project's binaries (hermes, the plugins and the
// test servers) once per test process, so tests run the real executables the
// way a user would. It belongs to tests only; nothing in a shipped binary
// imports it.
package testbin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Targets maps each binary name to the package that builds it, relative to
// the repository root.
var Targets = map[string]string{
	"hermes":                 "./cmd/hermes",
	"hermes-transport-stdio": "./plugins/stdio",
	// hermes mcp gateway's binary, which hermes finds beside itself.
	"hermes-gateway": "./cmd/hermes-gateway",
	// The stdio plugin's launcher and its filtering proxy (network:
	// [hosts]), which it finds beside itself.
	"hermes-stdio-launcher": "./plugins/stdio/cmd/hermes-stdio-launcher",
	"hermes-stdio-proxy":    "./plugins/stdio/cmd/hermes-stdio-proxy",
	"hermes-transport-http": "./plugins/http",
	"hermes-testserver":     "./internal/testserver/cmd/hermes-testserver",
	"confclient":            "./internal/confclient",
	// The model client's process (host/model calls through it).
	"hermes-model-openai": "./cmd/hermes-model-openai",
	// The OAuth auth plugin, which host/credentials' end-to-end tests
	// launch through a real supervisor.
	"hermes-auth-oauth": "./plugins/oauth",
	// The exec auth plugin, and a fake one that logs in through the host's
	// UI (a URL to open, a code to paste) for the CLI's login tests, with
	// a stand-in browser for BROWSER=.
	"hermes-auth-exec": "./plugins/exec",
	"hermes-auth-fake": "./internal/testplugins/fakeauth",
	// A bridge plugin whose tools echo, block and report their process,
	// for hermes mcp serve's tests.
	"hermes-bridge-fake": "./internal/testplugins/fakebridge",
	"fakebrowser":        "./internal/testplugins/fakebrowser",
	// The messaging bridge plugin of hermes mcp serve.
	"hermes-bridge-messaging": "./plugins/bridge",
	// The sdk's example third-party plugin, to prove `transport: <name>`
	// finds and uses a plugin the host knows nothing about.
	"hermes-transport-mcpgostdio":  "./sdk/mcpgo/examples/stdio",
	"hermes-transport-oldcontract": "./internal/testplugins/oldcontract",
	// An MCP server whose tools try to escape a sandbox (read secrets,
	// write outside its folders, reach the network, fork and allocate
	// without bound), to prove what the sandbox stops.
	"hermes-sandboxprobe": "./internal/sandboxprobe",
}

var (
	once      sync.Once
	dir       string
	errOut    error
	buildErrs = map[string]error{}
)

// dirPrefix begins the name of each test process's folder of binaries,
// followed by the process id: "hermes-testbin-<pid>-<random>".
const dirPrefix = "hermes-testbin-"

// removeStale removes the folders of binaries that test processes no
// longer running left behind (a test process cannot remove its own when
// it ends: a helper package has no TestMain, and a killed process runs
// nothing). Each holds about 260 MB, one per test process of a run, so
// without this every `make test` left gigabytes in the temporary folder.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), dirPrefix)
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 {
			// A folder of the old naming, without its pid: from a
			// process that ended before this one began.
			if info, err := os.Stat(d); err == nil && time.Since(info.ModTime()) > time.Hour {
				_ = os.RemoveAll(d)
			}
			continue
		}
		if pid != os.Getpid() && !alive(pid) {
			_ = os.RemoveAll(d)
		}
	}
}

// Root returns the repository root (the folder holding go.work).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// EnvDir names the variable that points the tests at a folder where every
// target is already built. `make test` builds the folder once (go run
// ./internal/testbin/cmd/buildtestbin) and sets the variable, so its
// dozen test processes do not each link all the targets again (each did,
// 15 links of 20-30 MB executables, before its first test could start).
// Without it each test process builds its own folder, as before. The
// folder is used as it is: set the variable only to a folder built from
// the same source (make test removes its folder when it ends).
const EnvDir = "HERMES_TESTBIN_DIR"

// Dir returns the folder holding every target built: the folder EnvDir
// names, or else one this test process builds once (the Go build cache
// makes later builds cheap). The host finds plugins beside the hermes
// executable, so the folder works as an install. A target that fails to
// build (or that EnvDir's folder lacks) fails the tests that ask for it by
// Path, and is logged here.
func Dir(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		if d := os.Getenv(EnvDir); d != "" {
			dir = d
			for name, pkg := range Targets {
				if !exists(pkg) {
					continue
				}
				if _, err := os.Stat(filepath.Join(d, name)); err != nil {
					buildErrs[name] = fmt.Errorf("%s=%s does not hold it (%v): rebuild the folder (go run ./internal/testbin/cmd/buildtestbin DIR) or unset %s", EnvDir, d, err, EnvDir)
				}
			}
			return
		}
		removeStale()
		d, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", dirPrefix, os.Getpid()))
		if err != nil {
			errOut = err
			return
		}
		dir = d
		buildErrs = BuildAll(d)
	})
	if errOut != nil {
		t.Fatalf("building test binaries: %v", errOut)
	}
	for name, err := range buildErrs {
		t.Logf("test binary %s did not build: %v", name, err)
	}
	return dir
}

// exists reports whether the target package pkg (relative to the root)
// has Go files: a target whose package does not exist yet is skipped.
func exists(pkg string) bool {
	m, _ := filepath.Glob(filepath.Join(Root(), pkg, "*.go"))
	return len(m) > 0
}

// BuildAll builds every target into the folder d, side by side (mostly
// linking, the cache has the rest), and returns the build error of each
// target that failed, by name.
func BuildAll(d string) map[string]error {
	root := Root()
	errs := map[string]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, pkg := range Targets {
		if !exists(pkg) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("go", "build", "-o", filepath.Join(d, name), pkg)
			cmd.Dir = root
			// Static, as make build links the binaries it ships.
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				// Tests that need this binary fail in Path; the others run.
				mu.Lock()
				errs[name] = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs
}

// Path returns the path of one built binary, failing the test if it was not
// built.
func Path(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Dir(t), name)
	if err := buildErrs[name]; err != nil {
		t.Fatalf("test binary %s: %v", name, err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("test binary %s was not built: %v", name, err)
	}
	return p
}

// Install copies the binary src to a new file dst (its folders made), the
// way an install or someone swapping it writes one: a new inode renamed
// into place, so a running copy is never written over. It returns the
// sha256 of the bytes, in hex, as a plugin: pin records it.
func Install(t testing.TB, src, dst string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst+".new", data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dst+".new", dst); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
