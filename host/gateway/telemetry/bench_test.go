package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/gateway/telemetry"
)

// discard is an OTLP/HTTP receiver on loopback that reads and drops every
// export: the cost measured is the gateway's, not a collector's.
func discard(b *testing.B) (url string, exports *atomic.Int64) {
	exports = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		exports.Add(1)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(srv.Close)
	return srv.URL, exports
}

// benchTelemetry is the gateway's telemetry with spans exported over OTLP to
// a discarding receiver and Prometheus on (spans: nil for all off). The span
// queue holds every span of the run, so none is dropped and the export's
// cost is in the figure: the timer stops after the final flush.
func benchTelemetry(b *testing.B, spans bool) *telemetry.Telemetry {
	b.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", strconv.Itoa(2*b.N+2048))
	cfg := telemetry.Config{Logger: hclog.NewNullLogger()}
	if spans {
		url, _ := discard(b)
		cfg.OTLPEndpoint = url
		cfg.Prometheus = true
	}
	tel, err := telemetry.New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	return tel
}

// served is a tools/call as a client sends it, with its trace context.
func served(i int) telemetry.Request {
	return telemetry.Request{
		Method:    "tools/call",
		Tool:      "mcp_everything_echo",
		RequestID: strconv.Itoa(i),
		Protocol:  "2025-11-25",
		SessionID: "c2Vzc2lvbi1pZC1vZi1hLWNsaWVudA",
		Server:    "everything",
		Meta:      map[string]any{"traceparent": clientTraceparnt, "progressToken": i},
	}
}

var upstream = telemetry.Request{
	Method: "tools/call", Tool: "echo", RequestID: "1", Protocol: "2025-11-25",
	Server: "everything", Transport: telemetry.TransportPipe,
}

// call is one request served and its upstream call, as the gateway makes them.
func call(tel *telemetry.Telemetry, i int) {
	ctx, finish := tel.Start(context.Background(), served(i))
	_, carrier, finishUp := tel.StartUpstream(ctx, upstream)
	if carrier["traceparent"] == "" {
		panic("no traceparent for the upstream")
	}
	finishUp(telemetry.Outcome{})
	finish(telemetry.Outcome{})
}

// cpuTime is the CPU time the test process has used, in user and kernel
// mode: on a busy machine it moves less than the wall clock, and it counts
// the exporter's goroutines as well as the request path.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startBench resets the timer and returns the CPU time at the start.
func startBench(b *testing.B) time.Duration {
	b.ReportAllocs()
	b.ResetTimer()
	return cpuTime()
}

// finishBench exports what is pending (inside the timing) and reports the
// CPU time per request since cpu0.
func finishBench(b *testing.B, tel *telemetry.Telemetry, cpu0 time.Duration) {
	if err := tel.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// block is how many requests run with telemetry on, then off, in turn.
const block = 500

// alternate runs b.N requests through work, in blocks of one Telemetry
// then the other, and reports the CPU time per request of each and what
// telemetry adds: both halves see the same machine, however busy. Each block
// with telemetry on ends with a flush, so its export is counted in it.
func alternate(b *testing.B, work func(tel *telemetry.Telemetry, i int)) {
	off, on := benchTelemetry(b, false), benchTelemetry(b, true)
	var cpuOff, cpuOn time.Duration
	var nOff, nOn int
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; {
		tel, cpu, n := off, &cpuOff, &nOff
		if (i/block)%2 == 1 {
			tel, cpu, n = on, &cpuOn, &nOn
		}
		c0 := cpuTime()
		j := 0
		for ; j < block && i < b.N; j++ {
			work(tel, i)
			i++
		}
		if tel == on {
			if err := on.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		*cpu += cpuTime() - c0
		*n += j
	}
	b.StopTimer()
	if nOff == 0 || nOn == 0 {
		return // the first, one-request run of the benchmark
	}
	perOff, perOn := float64(cpuOff)/float64(nOff), float64(cpuOn)/float64(nOn)
	b.ReportMetric(perOff, "off-cpu-ns/req")
	b.ReportMetric(perOn, "on-cpu-ns/req")
	b.ReportMetric(perOn-perOff, "added-cpu-ns/req")
	for _, tel := range []*telemetry.Telemetry{off, on} {
		if err := tel.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRequest: one request served and its upstream call (two spans,
// two histogram measurements, the upstream's traceparent), telemetry on
// (OTLP/HTTP to a discarding receiver, and Prometheus) against off (the
// trace context only passed through).
func BenchmarkRequest(b *testing.B) {
	alternate(b, call)
}

// BenchmarkRequestServedOnly: the server span and histogram of one request,
// no upstream call.
func BenchmarkRequestServedOnly(b *testing.B) {
	alternate(b, func(tel *telemetry.Telemetry, i int) {
		_, finish := tel.Start(context.Background(), served(i))
		finish(telemetry.Outcome{})
	})
}

// BenchmarkRequestParallel: requests and their upstream calls from as many
// goroutines as GOMAXPROCS, telemetry on; the figure is CPU time per request.
func BenchmarkRequestParallel(b *testing.B) {
	tel := benchTelemetry(b, true)
	cpu0 := startBench(b)
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			call(tel, int(n.Add(1)))
		}
	})
	finishBench(b, tel, cpu0)
}
