package bench_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/sdk"
)

// Package initialisation. Every hermes command and every plugin start pays
// for what each linked package computes before main: GODEBUG=inittrace=1
// makes a Go binary print one line per package it initialises, with the
// clock time, bytes and allocations of that package's init.

// pkgInit is one line of an init trace.
type pkgInit struct {
	pkg    string
	ms     float64
	bytes  int64
	allocs int64
}

// initTrace runs argv with GODEBUG=inittrace=1 to its exit (a plugin run
// by hand exits at once, refusing to serve) and returns its init trace and
// its wall time. A non-zero exit is not an error here; no trace is.
func initTrace(tb testing.TB, argv ...string) ([]pkgInit, time.Duration) {
	tb.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"GODEBUG=inittrace=1", "HOME=" + tb.TempDir()}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if cmd.ProcessState == nil {
		tb.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	var out []pkgInit
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init <pkg> @<t> ms, <ms> ms clock, <bytes> bytes, <allocs> allocs
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[6] != "clock," || f[8] != "bytes," {
			continue
		}
		p := pkgInit{pkg: f[1]}
		p.ms, _ = strconv.ParseFloat(f[4], 64)
		p.bytes, _ = strconv.ParseInt(f[7], 10, 64)
		p.allocs, _ = strconv.ParseInt(f[9], 10, 64)
		out = append(out, p)
	}
	if len(out) == 0 {
		tb.Fatalf("%s printed no init trace (exit %v); stderr:\n%s", strings.Join(argv, " "), err, stderr.String())
	}
	return out, wall
}

const hermesModule = "github.com/hermes-agent/hermes"

// Init budgets, in bytes allocated by one package's initialisation. They
// count work, not time, so they hold on any machine. Compiling one small
// regular expression allocates 2–5 KiB; hermes's own packages used to
// compile dozens at init (host/screening 650 KB, host/cli 200 KB,
// host/config 117 KB, host/catalog 89 KB).
const (
	// ownInitBudget is the most a package of this repository may allocate
	// at init: compile expressions, templates and schemas on first use
	// (host/internal/lazyregexp, sync.OnceValue) instead.
	ownInitBudget = 16 << 10
	// libInitBudget is the most another package may allocate at init
	// without being named in heavyInit.
	libInitBudget = 64 << 10
)

// heavyInit names the packages allowed to allocate more than their budget
// at init, per binary, and why: a library we cannot change, or work the
// binary does at once whenever it runs for real.
var heavyInit = map[string]map[string]string{
	"hermes": {
		// (santhosh-tekuri/jsonschema, which mcp-go's server links, used
		// to compile five drafts' meta-schemas at init, 1.7 MB: the copy
		// in third_party compiles them on first use.)
		"github.com/google/jsonschema-go/jsonschema": "mcp-go/mcp",
	},
	"hermes-gateway": {
		// As for hermes.
		"github.com/google/jsonschema-go/jsonschema": "mcp-go/mcp",
		// The Prometheus client registers its process collector at init
		// (procfs); only the gateway links it, for /metrics.
		"github.com/prometheus/procfs": "prometheus/client_golang via the otel Prometheus exporter",
		// grpc registers protobuf descriptors at init; only the gateway
		// links it, through the OTLP exporters (go-plugin's copy in
		// third_party has no gRPC half).
		"google.golang.org/protobuf/reflect/protodesc": "the otel OTLP exporters → grpc",
	},
	"hermes-transport-stdio": {
		// The sandbox's seccomp filter tables.
		"github.com/elastic/go-seccomp-bpf/arch": "the stdio sandbox",
	},
	"hermes-bridge-messaging": {
		// The ten tools' schemas, which the plugin lists as soon as the
		// host starts it (it is started only to serve them).
		hermesModule + "/plugins/bridge/internal/tools": "the tool definitions",
	},
}

// shipped are the binaries `make install` ships, with the arguments that
// start one and end it at once, and the package that builds it.
var shipped = []struct {
	name, pkg string
	args      []string
}{
	{"hermes", "./cmd/hermes", []string{"--version"}},
	{"hermes-gateway", "./cmd/hermes-gateway", []string{"--help"}},
	{"hermes-transport-stdio", "./plugins/stdio", nil},
	{"hermes-stdio-launcher", "./plugins/stdio/cmd/hermes-stdio-launcher", nil},
	{"hermes-stdio-proxy", "./plugins/stdio/cmd/hermes-stdio-proxy", nil},
	{"hermes-transport-http", "./plugins/http", nil},
	{"hermes-auth-oauth", "./plugins/oauth", nil},
	{"hermes-auth-exec", "./plugins/exec", nil},
	{"hermes-bridge-messaging", "./plugins/bridge", nil},
}

// TestInitAllocations holds every shipped binary's package initialisation
// to what cannot be avoided: no package of this repository allocates more
// than ownInitBudget at init (nothing compiled that a command may not use),
// and no library more than libInitBudget unless heavyInit names it for
// that binary. It counts bytes, never time.
func TestInitAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every shipped binary")
	}
	dir := t.TempDir()
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, s := range shipped {
		args = append(args, s.pkg)
	}
	if err := goBuild(args...); err != nil {
		t.Fatal(err)
	}
	for _, s := range shipped {
		bin := filepath.Join(dir, filepath.Base(s.pkg))
		trace, _ := initTrace(t, append([]string{bin}, s.args...)...)
		var total int64
		for _, p := range trace {
			total += p.bytes
			if _, ok := heavyInit[s.name][p.pkg]; ok {
				continue
			}
			if strings.HasPrefix(p.pkg, hermesModule+"/") {
				if p.bytes > ownInitBudget {
					t.Errorf("%s: package %s allocates %d bytes (%d allocations) at init, over %d: compile what it builds on first use (host/internal/lazyregexp, sync.OnceValue)",
						s.name, p.pkg, p.bytes, p.allocs, ownInitBudget)
				}
				continue
			}
			if p.bytes <= libInitBudget {
				continue
			}
			if _, ok := heavyInit["*"][p.pkg]; ok {
				continue
			}
			t.Errorf("%s: library %s allocates %d bytes (%d allocations) at init, over %d: find which package of ours links it (go list -deps) and keep it to the command that needs it",
				s.name, p.pkg, p.bytes, p.allocs, libInitBudget)
		}
		t.Logf("%s: %d packages initialised, %d KiB allocated", s.name, len(trace), total>>10)
	}
}

// BenchmarkStartup measures a process's start to its exit, alternating
// `hermes --version`, hermes-transport-stdio run by hand (it refuses to
// serve and exits) and the bare go-plugin plugin run the same way, each
// with GODEBUG=inittrace=1. Reported per binary, medians of the
// iterations: wall time from spawn to reaped (-ms), the sum of the init
// trace's clock times (-init-ms). (Peak resident memory is not reported:
// a child started from this large process inherits its high-water mark.)
func BenchmarkStartup(b *testing.B) {
	dir := bins(b)
	runs := []struct {
		name string
		argv []string
	}{
		{"hermes", []string{filepath.Join(dir, "hermes"), "--version"}},
		{"stdio", []string{filepath.Join(dir, "hermes-transport-stdio")}},
		{"bare", []string{filepath.Join(dir, sdk.BinaryName(bareKind, bareName))}},
	}
	for _, r := range runs { // warm the page cache
		initTrace(b, r.argv...)
	}
	n := len(runs)
	wall, init := make([][]time.Duration, n), make([][]float64, n)
	i := 0
	for b.Loop() {
		for k := range n {
			j := (i + k) % n
			trace, took := initTrace(b, runs[j].argv...)
			var sum float64
			for _, p := range trace {
				sum += p.ms
			}
			wall[j] = append(wall[j], took)
			init[j] = append(init[j], sum)
		}
		i++
	}
	for j, r := range runs {
		b.ReportMetric(ms(median(wall[j])), r.name+"-ms")
		b.ReportMetric(median(init[j]), r.name+"-init-ms")
	}
	b.Log(fmt.Sprintf("init: hermes %.1f ms, stdio plugin %.1f ms, bare plugin %.1f ms",
		median(init[0]), median(init[1]), median(init[2])))
}

// TestHermesLinksNoGateway: hermes does not link the gateway's packages
// or the libraries only they need; hermes mcp gateway runs hermes-gateway
// for them (docs/BENCHMARKS.md, The gateway's own binary).
func TestHermesLinksNoGateway(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./cmd/hermes")
	cmd.Dir = testbin.Root()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, never := range []string{hermesModule + "/host/gateway", "go.opentelemetry.io/", "github.com/prometheus/", "cel.dev/", "github.com/go-jose/"} {
			if strings.HasPrefix(dep, never) {
				t.Errorf("hermes links %s: keep it to hermes-gateway", dep)
			}
		}
	}
}
