package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// BenchmarkServerStart measures a server's start inside the plugin, from
// start to its first line read, then its stop: in a pid namespace of its
// own (under the launcher as its init), started directly (the fallback),
// and under the default sandbox with network: none (as root, with its pids
// cgroup; the never-readable paths as hermes sends them, its home being a
// temporary folder, so every entry of the temporary folder's parent is a
// Landlock rule). The first start, which remembers what the kernel allows, is
// made before the timer.
func BenchmarkServerStart(b *testing.B) {
	for _, name := range []string{"direct", "pidns", "sandbox"} {
		b.Run(name, func(b *testing.B) {
			sandboxOptions = sandbox.Options{NoPidNS: name == "direct"}
			defer func() { sandboxOptions = sandbox.Options{} }()
			cfg := transport.Config{Server: "bench", Command: "sh", Args: []string{"-c", "echo '{}'; exec cat"},
				Env: []string{"PATH=/usr/bin:/bin"}}
			if name == "sandbox" {
				// As hermes sends it: its home and the default deny list
				// never readable.
				home, _ := os.UserHomeDir()
				deny := []string{b.TempDir()}
				for _, p := range []string{".ssh", ".aws", ".config/gcloud", ".gnupg", ".netrc"} {
					deny = append(deny, filepath.Join(home, p))
				}
				cfg.Sandbox = &transport.Sandbox{Network: transport.Network{Mode: transport.NetworkNone}, DenyRead: deny,
					Limits: transport.Limits{MemoryBytes: 1 << 30, OpenFiles: 1024, Processes: 256}}
			}
			var up, down time.Duration
			one := func() {
				t0 := time.Now()
				c, err := start(context.Background(), cfg, &fakeHost{}, hclog.NewNullLogger())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Read(context.Background()); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				_ = c.Close()
				up, down = up+t1.Sub(t0), down+time.Since(t1)
			}
			one()
			up, down = 0, 0
			b.ResetTimer()
			n := 0
			for b.Loop() {
				one()
				n++
			}
			b.ReportMetric(float64(up.Microseconds())/1000/float64(n), "start-ms")
			b.ReportMetric(float64(down.Microseconds())/1000/float64(n), "stop-ms")
		})
	}
}
