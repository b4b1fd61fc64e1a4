package bench_test

import (
	"net/rpc"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkPluginStart measures a plugin's start, from spawn to ready (the
// go-plugin handshake and the dispense), through the host's supervisor:
// hermes-transport-stdio against the bare go-plugin net/rpc plugin of
// testdata/bareplugin, started by the same supervisor with the same
// handshake. Each iteration starts one of each, in alternating order, and
// kills them (not timed); stdio-start-ms and bare-start-ms are medians.
// stdio-cpu-ms and bare-cpu-ms are the CPU time of one plugin process's
// whole life (start, handshake, dispense, quit), medians.
func BenchmarkPluginStart(b *testing.B) {
	dir := bins(b)
	b.Setenv("HERMES_PLUGIN_PATH", dir)
	sup := supervisor.New(supervisor.Options{Home: b.TempDir()})
	defer sup.KillAll()
	specs := [2]supervisor.Spec{stdioSpec(b), bareSpec(b)}
	for _, s := range specs { // warm the page cache
		p, _ := startPlugin(b, sup, s)
		p.Kill()
	}
	var took, cpu [2][]time.Duration
	i := 0
	for b.Loop() {
		for k := range 2 {
			j := (i + k) % 2
			cpu0 := childrenCPU()
			t0 := time.Now()
			p, _ := startPlugin(b, sup, specs[j])
			took[j] = append(took[j], time.Since(t0))
			p.Kill() // returns once the process is reaped
			cpu[j] = append(cpu[j], childrenCPU()-cpu0)
		}
		i++
	}
	stdio, bare := median(took[0]), median(took[1])
	b.ReportMetric(ms(stdio), "stdio-start-ms")
	b.ReportMetric(ms(bare), "bare-start-ms")
	b.ReportMetric(ms(median(cpu[0])), "stdio-cpu-ms")
	b.ReportMetric(ms(median(cpu[1])), "bare-cpu-ms")
	checkFloor(b, "plugin start: stdio / bare", "stdio/bare", float64(stdio)/float64(bare), 1.5)
}

// startPlugin launches the plugin spec names and dispenses it.
func startPlugin(b *testing.B, sup *supervisor.Supervisor, spec supervisor.Spec) (*supervisor.Plugin, any) {
	p, err := sup.Launch(spec)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := p.Dispense()
	if err != nil {
		p.Kill()
		b.Fatal(err)
	}
	return p, raw
}

// BenchmarkPluginRSS compares resident memory (VmRSS): hermes-transport-stdio
// serving a live session to the test server after 1000 echo calls and, once
// it has given back its binary's pages (sdk.PagesShedDelay), 100 more, against
// the bare plugin idle after dispense and one call of its method. The
// session negotiates, as hermes does (protocol auto, a fresh HERMES_HOME),
// so it speaks 2026-07-28; stdio-serving-legacy-RSS-MB is the same with
// 2025-11-25 pinned. It also reports the stdio plugin idle after dispense.
// Figures are medians of the iterations.
func BenchmarkPluginRSS(b *testing.B) {
	dir := bins(b)
	b.Setenv("HERMES_PLUGIN_PATH", dir)
	server := filepath.Join(dir, "hermes-testserver")
	sup := supervisor.New(supervisor.Options{Home: b.TempDir()})
	defer sup.KillAll()
	var serving, servingLegacy, idle, bare []float64
	for b.Loop() {
		for _, rev := range []string{"", mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
			s := connect(b, sup, b.TempDir(), server, rev)
			for range 1000 {
				call(b, s.Client, echoReq)
			}
			// A plugin gives back its pages a while after its start
			// (sdk.PagesShedDelay): serving on after that is the steady
			// state measured. The drop of its resident memory is the
			// event waited for.
			waitRSSDrop(b, s.Plugin.Pid())
			for range 100 {
				call(b, s.Client, echoReq)
			}
			if rev == "" {
				serving = append(serving, rssMB(s.Plugin.Pid()))
			} else {
				servingLegacy = append(servingLegacy, rssMB(s.Plugin.Pid()))
			}
			s.Close()
		}

		p, _ := startPlugin(b, sup, stdioSpec(b))
		idle = append(idle, rssMB(p.Pid()))
		p.Kill()

		p, raw := startPlugin(b, sup, bareSpec(b))
		var pong string
		if err := raw.(*rpc.Client).Call("Plugin.Ping", "", &pong); err != nil || pong != "pong" {
			b.Fatalf("bare plugin Ping: %q, %v", pong, err)
		}
		bare = append(bare, rssMB(p.Pid()))
		p.Kill()
	}
	if median(bare) == 0 {
		b.Skip("no VmRSS in /proc on this system")
	}
	b.ReportMetric(median(serving), "stdio-serving-RSS-MB")
	b.ReportMetric(median(servingLegacy), "stdio-serving-legacy-RSS-MB")
	b.ReportMetric(median(idle), "stdio-idle-RSS-MB")
	b.ReportMetric(median(bare), "bare-RSS-MB")
	checkFloor(b, "plugin RSS: stdio serving / bare idle", "stdio/bare", median(serving)/median(bare), 1.15)
}

// stdioSpec is the launch spec of hermes-transport-stdio, as the plan of a
// stdio entry gives it.
func stdioSpec(b *testing.B) supervisor.Spec {
	plan := session.PlanFor(&config.Server{Name: "bench", Transport: "stdio", Command: "true"}, b.TempDir(), nil)
	if plan.Refused != nil {
		b.Fatal(plan.Refused)
	}
	return plan.Spec
}

// waitRSSDrop waits for the resident memory of process pid to drop by a
// megabyte or more (a plugin giving back its pages, sdk.PagesShedDelay
// after its start), for at most a minute.
func waitRSSDrop(b *testing.B, pid int) {
	before := rssMB(pid)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(time.Minute); rssMB(pid) > before-1; <-tick.C {
		if time.Now().After(deadline) {
			b.Fatalf("the plugin's resident memory did not drop from %.1f MB within a minute (sdk.PagesShedDelay is %s)", before, sdk.PagesShedDelay)
		}
	}
}
