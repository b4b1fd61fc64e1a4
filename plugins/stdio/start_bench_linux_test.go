package main

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// BenchmarkServerStart measures an unsandboxed server's start, from start
// to its first line read, then its stop: in a pid namespace of its own
// (under the launcher as its init) and started directly (the fallback).
// The pid namespace probe, once per plugin process, is made before the
// timer.
func BenchmarkServerStart(b *testing.B) {
	for _, pidns := range []bool{false, true} {
		name := "direct"
		if pidns {
			name = "pidns"
		}
		b.Run(name, func(b *testing.B) {
			sandboxOptions = sandbox.Options{NoPidNS: !pidns}
			defer func() { sandboxOptions = sandbox.Options{} }()
			cfg := transport.Config{Server: "bench", Command: "sh", Args: []string{"-c", "echo '{}'; exec cat"},
				Env: []string{"PATH=/usr/bin:/bin"}}
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
