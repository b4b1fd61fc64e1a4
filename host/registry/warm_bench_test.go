package registry_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/hermes-agent/hermes/host/registry"
)

// BenchmarkWarmStart is what `hermes tools` does with ten cached servers
// inside the registry: a lazy registry started from ten fresh records of
// the Go test server's listing (each with its approved baseline, as after
// a first connection), nothing connected, then closed. Each record is
// read, checked and compared with its baseline. It reports the CPU time
// of this process per cached server (cpu-ms/server; the goal is ≤ 2 ms)
// beside the wall time.
//
//	go test -run '^$' -bench WarmStart -benchtime 200x -count 3 ./host/registry/
func BenchmarkWarmStart(b *testing.B) {
	deps, dir, _ := liveEnv(b)
	st := offered.Open(deps.Home, nil)
	const n = 10
	servers := make([]*config.Server, n)
	for i := range servers {
		servers[i] = tsServer(dir, fmt.Sprintf("s%d", i))
	}
	// One connection gives the listing; each server gets a record of it
	// and a baseline trusted on first use, as a connection would leave.
	recordServer(b, deps, st, servers[0], nil)
	rec, err := st.Load(servers[0])
	if err != nil {
		b.Fatal(err)
	}
	for _, srv := range servers {
		r := *rec
		r.Server, r.SettingsDigest, r.FetchedAt = srv.StateKey(), offered.SettingsDigest(srv), time.Time{}
		if err := st.Save(&r); err != nil {
			b.Fatal(err)
		}
		if _, _, err := st.Trust(srv.StateKey(), r.Tools); err != nil {
			b.Fatal(err)
		}
	}
	opts := registry.Options{Servers: servers, Deps: deps, Timings: fast(), Lazy: true, Records: registry.RecordsFrom(st)}
	want := n * len(rec.Tools)
	cpu0 := cpuTime()
	for b.Loop() {
		m := registry.New(opts)
		if err := m.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		if got := len(m.Tools()); got != want {
			b.Fatalf("%d tools registered, want %d", got, want)
		}
		for _, s := range m.Status() {
			if s.State != registry.StateIdle {
				b.Fatalf("server %s is %s, want idle (started from its record)", s.Name, s.State)
			}
		}
		if d := m.Drift(); len(d) != 0 {
			b.Fatalf("drift from the cached tools: %+v", d)
		}
		m.Detach()
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(ms(cpu)/float64(b.N)/n, "cpu-ms/server")
	b.ReportMetric(ms(b.Elapsed())/float64(b.N)/n, "wall-ms/server")
	b.ReportMetric(float64(len(rec.Tools)), "tools/server")
}

// cpuTime is this process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
