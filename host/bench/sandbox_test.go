//go:build linux

package bench_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
)

// BenchmarkSandboxStart measures what the sandbox adds to a server's start:
// session.Connect of the Go test server through hermes-transport-stdio,
// from the plugin's spawn to a completed MCP handshake, exactly as hermes
// connects one, without a sandbox and with one. "sandbox" is the default
// block with network: none (Landlock with $HERMES_HOME and the default
// deny list cut out of a read-only /, seccomp, the default limits, the
// launcher's re-exec; as root a pids cgroup); "sandbox-hosts" is a hosts
// list instead (a network namespace of its own and the filtering proxy).
// Each iteration connects all three, in rotating order, and closes them
// (not timed); the warm-up logs what the transport reported in force for
// each. plain-start-ms, sandbox-start-ms and sandbox-hosts-start-ms are
// medians; sandbox-extra-ms is the difference of the medians; the ratios
// are sandboxed / plain. There is no floor: the figures are recorded in
// docs/BENCHMARKS.md.
func BenchmarkSandboxStart(b *testing.B) {
	dir := bins(b)
	b.Setenv("HERMES_PLUGIN_PATH", dir)
	server := filepath.Join(dir, "hermes-testserver")
	home := b.TempDir()
	sup := supervisor.New(supervisor.Options{Home: home})
	defer sup.KillAll()
	entry := func(block map[string]any) *config.Server {
		srv := &config.Server{Name: "bench", Transport: "stdio", Command: server,
			Enabled: true, ConnectTimeout: 20 * time.Second, Timeout: time.Minute}
		if block != nil {
			sb, err := config.ParseSandbox(block, nil)
			if err != nil {
				b.Fatal(err)
			}
			srv.Sandbox = sb
		}
		return srv
	}
	entries := [3]*config.Server{
		entry(nil),
		entry(map[string]any{"network": "none"}),
		entry(map[string]any{"network": []any{"api.example.com"}}),
	}
	names := [3]string{"plain", "sandbox", "sandbox-hosts"}
	start := func(srv *config.Server, logAs string) time.Duration {
		t0 := time.Now()
		s, err := session.Connect(context.Background(), session.PlanFor(srv, home, nil), session.Deps{Home: home, Supervisor: sup})
		took := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if (srv.Sandbox != nil) != (s.Sandbox() != nil) {
			b.Fatalf("sandbox asked %v, in force %v", srv.Sandbox != nil, s.Sandbox())
		}
		if logAs != "" {
			b.Logf("%s: %v", logAs, s.Sandbox())
		}
		s.Close()
		return took
	}
	for j, srv := range entries { // warm the page cache and the remembered revision
		start(srv, names[j])
	}
	var took [3][]time.Duration
	i := 0
	for b.Loop() {
		for k := range 3 {
			j := (i + k) % 3
			took[j] = append(took[j], start(entries[j], ""))
		}
		i++
	}
	plain, sandboxed, hosts := median(took[0]), median(took[1]), median(took[2])
	b.ReportMetric(ms(plain), "plain-start-ms")
	b.ReportMetric(ms(sandboxed), "sandbox-start-ms")
	b.ReportMetric(ms(hosts), "sandbox-hosts-start-ms")
	b.ReportMetric(ms(sandboxed-plain), "sandbox-extra-ms")
	checkFloor(b, "sandboxed start / plain start", "sandbox/plain", float64(sandboxed)/float64(plain), 1.2)
	b.ReportMetric(float64(hosts)/float64(plain), "hosts/plain")
}
