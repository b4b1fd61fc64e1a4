package bench_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
)

// gcHook is a file added to the stdio plugin's main package (go build
// -overlay) for BenchmarkPluginPages: on SIGUSR1 it collects garbage, as
// the runtime's forced collection does (stacks scanned, so the function
// tables of the code on them read), and says so on stderr with the number
// of collections that ran before.
const gcHook = `package main

import (
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
)

func init() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	go func() {
		for range c {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			before := m.NumGC
			runtime.GC()
			os.Stderr.WriteString("` + gcHookDone + ` after " + strconv.Itoa(int(before)) + "\n")
		}
	}()
}
`

// gcHookDone starts the line gcHook writes after each collection.
const gcHookDone = "bench gc hook: collected"

// BenchmarkPluginPages measures what the stdio plugin keeps resident once
// it has given back its binary's pages (sdk.KeepPagesEnv), and what comes
// back: serving a session after 1000 calls (as BenchmarkPluginRSS), then
// after a garbage collection in the plugin (runtime.GC, through a hook built
// into this copy of the plugin, which the benchmark waits for: the runtime
// forces one every two minutes once one has run), then after 1000 more
// calls. For each, VmRSS and the resident pages of the executable's code
// and read-only data (smaps), in MB, medians of the iterations;
// stdio-collections-before is how many collections the plugin had run
// before the hook's (none: then the runtime never forces one).
func BenchmarkPluginPages(b *testing.B) {
	dir := gcHookBins(b)
	b.Setenv("HERMES_PLUGIN_PATH", dir)
	server := filepath.Join(bins(b), "hermes-testserver")
	collected := make(chan string, 1)
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: &lineWatch{line: []byte(gcHookDone), seen: collected}})
	sup := supervisor.New(supervisor.Options{Home: b.TempDir(), Logger: log})
	defer sup.KillAll()
	steps := []string{"serving", "after-gc", "after-gc-calls"}
	figures := map[string][]float64{}
	for b.Loop() {
		s := connect(b, sup, b.TempDir(), server, "")
		pid := s.Plugin.Pid()
		record := func(step string) {
			text, rodata := exeResidentMB(pid)
			figures[step+"-RSS-MB"] = append(figures[step+"-RSS-MB"], rssMB(pid))
			figures[step+"-text-MB"] = append(figures[step+"-text-MB"], text)
			figures[step+"-rodata-MB"] = append(figures[step+"-rodata-MB"], rodata)
		}
		for range 1000 {
			call(b, s.Client, echoReq)
		}
		record(steps[0])
		if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
			b.Fatal(err)
		}
		select {
		case line := <-collected:
			_, n, _ := strings.Cut(line, gcHookDone+" after ")
			runs, err := strconv.Atoi(strings.Fields(n + " x")[0])
			if err != nil {
				b.Fatalf("the garbage collection hook said %q", line)
			}
			figures["collections-before"] = append(figures["collections-before"], float64(runs))
		case <-time.After(time.Minute):
			b.Fatal("the plugin did not report its garbage collection")
		}
		record(steps[1])
		for range 1000 {
			call(b, s.Client, echoReq)
		}
		record(steps[2])
		s.Close()
	}
	for _, step := range steps {
		for _, what := range []string{"RSS", "text", "rodata"} {
			name := step + "-" + what + "-MB"
			b.ReportMetric(median(figures[name]), "stdio-"+name)
		}
	}
	b.ReportMetric(median(figures["collections-before"]), "stdio-collections-before")
}

// gcHookBins builds the stdio plugin with gcHook into a folder of its own,
// beside links to the launcher and the proxy of bins.
func gcHookBins(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	root := testbin.Root()
	hook := filepath.Join(dir, "gchook.go")
	overlay := filepath.Join(dir, "overlay.json")
	main := filepath.Join(root, filepath.FromSlash(testbin.Targets["hermes-transport-stdio"]), "bench_gchook.go")
	replace, _ := json.Marshal(map[string]map[string]string{"Replace": {main: hook}})
	if err := os.WriteFile(hook, []byte(gcHook), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(overlay, replace, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := goBuild("build", "-overlay", overlay, "-o", filepath.Join(dir, "hermes-transport-stdio"), testbin.Targets["hermes-transport-stdio"]); err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{launcherName, "hermes-stdio-proxy"} {
		if err := os.Symlink(filepath.Join(bins(b), name), filepath.Join(dir, name)); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// lineWatch is a log output that sends on seen each line that holds line.
type lineWatch struct {
	mu   sync.Mutex
	line []byte
	seen chan string
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for l := range bytes.Lines(p) {
		if i := bytes.Index(l, w.line); i >= 0 {
			select {
			case w.seen <- string(bytes.TrimSpace(l[i:])):
			default:
			}
		}
	}
	return len(p), nil
}

var _ io.Writer = (*lineWatch)(nil)

// exeResidentMB reads, from /proc/PID/smaps, the resident pages of a
// process's executable: its code (r-x) and its read-only data (r--), in MB.
func exeResidentMB(pid int) (text, rodata float64) {
	proc := "/proc/" + strconv.Itoa(pid)
	exe, err := os.Readlink(proc + "/exe")
	if err != nil {
		return 0, 0
	}
	b, err := os.ReadFile(proc + "/smaps")
	if err != nil {
		return 0, 0
	}
	var cur *float64
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 6 && strings.Contains(f[0], "-") && strings.HasSuffix(l, " "+exe):
			switch f[1] {
			case "r-xp":
				cur = &text
			case "r--p":
				cur = &rodata
			default:
				cur = nil
			}
		case len(f) >= 1 && strings.Contains(f[0], "-"):
			cur = nil
		case cur != nil && len(f) >= 2 && f[0] == "Rss:":
			kb, _ := strconv.ParseFloat(f[1], 64)
			*cur += kb / 1024
		}
	}
	return text, rodata
}
