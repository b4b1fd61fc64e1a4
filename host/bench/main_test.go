package bench_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net/rpc"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/benchfloor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
)

func TestMain(m *testing.M) {
	if os.Getenv(hostileAttackEnv) != "" {
		// A host of the hostile figures (hostile_test.go), not a test run.
		os.Exit(hostileHostMain())
	}
	// net/rpc logs through the standard logger, and yamux, go-plugin's
	// multiplexer, writes "[ERR] yamux: ..." for every killed plugin
	// connection to os.Stderr (its default, read when a connection is
	// made); go test would show either in the middle of a benchmark's
	// result line. Benchmarks drop both; their own output goes to stdout.
	log.SetOutput(io.Discard)
	stderr := os.Stderr
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		os.Stderr = null
	}
	code := m.Run()
	os.Stderr = stderr
	benchfloor.Print(os.Stdout)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// checkFloor reports ratio against its floor (package benchfloor); the
// summary is printed after the benchmarks.
func checkFloor(b *testing.B, name, unit string, ratio, floor float64) {
	b.Helper()
	benchfloor.Check(b, name, unit, ratio, floor)
}

// median returns the median of xs (0 for none).
func median[T int64 | float64 | time.Duration](xs []T) T { return benchfloor.Median(xs) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Binaries. The benchmarks build only what they run, once per process, into
// one folder (hermes finds its plugins beside itself): hermes,
// hermes-transport-stdio with its launcher and its proxy,
// hermes-testserver, and the two baselines under testdata: the bare
// go-plugin plugin (hermes-bench-bare)
// and the minimal mcp-go client (oneshotclient). Same toolchain, same flags
// for all, and CGO_ENABLED=0, as make build links what it ships; the
// launcher with make build's flags (-trimpath -s -w), since its resident
// memory is one of the figures.

const (
	bareKind = "bench"
	bareName = "bare"
	// launcherName is the stdio plugin's launcher, built beside it.
	launcherName = "hermes-stdio-launcher"
)

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// bins builds the binaries and returns their folder.
func bins(tb testing.TB) string {
	tb.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "hermes-bench-")
		if binErr != nil {
			return
		}
		// name → package; one go build links them in parallel into a
		// staging folder, under the last element of the package path.
		pkgs := map[string]string{"oneshotclient": "./host/bench/testdata/oneshotclient"}
		for _, name := range []string{"hermes", "hermes-transport-stdio", "hermes-stdio-proxy", "hermes-testserver"} {
			pkgs[name] = testbin.Targets[name]
		}
		stage := filepath.Join(binDir, "stage")
		args := []string{"build", "-o", stage + string(filepath.Separator)}
		for _, pkg := range pkgs {
			args = append(args, pkg)
		}
		var wg sync.WaitGroup
		errs := make([]error, 3)
		wg.Add(3)
		go func() {
			defer wg.Done()
			errs[2] = goBuild("build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(binDir, launcherName), testbin.Targets[launcherName])
		}()
		go func() {
			defer wg.Done()
			if errs[0] = goBuild(args...); errs[0] != nil {
				return
			}
			for name, pkg := range pkgs {
				if err := os.Rename(filepath.Join(stage, filepath.Base(pkg)), filepath.Join(binDir, name)); err != nil {
					errs[0] = err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			// The bare plugin gets the host's handshake at link time, so
			// that it does not link the sdk.
			errs[1] = goBuild("build", "-o", filepath.Join(binDir, sdk.BinaryName(bareKind, bareName)), "-ldflags", strings.Join([]string{
				"-X main.cookieKey=" + pluginhost.Handshake(bareKind).MagicCookieKey,
				"-X main.cookieValue=" + pluginhost.Handshake(bareKind).MagicCookieValue,
				"-X main.protocolVersion=" + strconv.Itoa(int(pluginhost.Handshake(bareKind).ProtocolVersion)),
				"-X main.kind=" + bareKind,
			}, " "), "./host/bench/testdata/bareplugin")
		}()
		wg.Wait()
		binErr = errors.Join(errs...)
	})
	if binErr != nil {
		tb.Fatalf("building the benchmark binaries: %v", binErr)
	}
	return binDir
}

// goBuild runs the go command (the toolchain on PATH, as internal/testbin
// uses) at the repository root.
func goBuild(args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = testbin.Root()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as make build links them
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// bareSpec is the supervisor spec of the bare plugin: the same supervisor,
// runner and handshake as a transport plugin, another binary.
func bareSpec(tb testing.TB) supervisor.Spec {
	return supervisor.Spec{Kind: bareKind, Name: bareName, Label: "bare", Dir: bins(tb),
		Plugins: map[string]plugin.Plugin{bareKind: barePlugin{}}}
}

// barePlugin is the host side of the bare plugin: Dispense returns its
// *rpc.Client.
type barePlugin struct{}

func (barePlugin) Server(*plugin.MuxBroker) (any, error) {
	return nil, errors.New("the bare plugin's server side runs in its own binary")
}

func (barePlugin) Client(_ *plugin.MuxBroker, c *rpc.Client) (any, error) { return c, nil }

// rssMB reads a process's resident set size (VmRSS) in MB.
func rssMB(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseFloat(f[1], 64)
				return kb / 1024
			}
		}
	}
	return 0
}
