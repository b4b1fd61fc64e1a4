package telemetry_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/gateway/telemetry"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// names are the names of spans received.
func (r *receiver) names() []string {
	var n []string
	for _, s := range r.allSpans() {
		n = append(n, s.GetName())
	}
	return n
}

func has(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// TestSwapKeepsRequestsInFlight: after Swap the requests that start go to
// the new exporters, a request in flight at the swap ends on the old ones,
// and the old exporters are shut down (their spans and metrics flushed) when
// that request ends, not before: nothing is lost across the swap.
func TestSwapKeepsRequestsInFlight(t *testing.T) {
	before, after := newReceiver(t), newReceiver(t)
	tel := newTelemetry(t, telemetry.Config{OTLPEndpoint: before.srv.URL})
	ctx := t.Context()

	_, finishOld := tel.Start(ctx, telemetry.Request{Method: "tools/call", Tool: "mcp_a_in_flight", Protocol: "2025-11-25"})
	tel.Swap(newTelemetry(t, telemetry.Config{OTLPEndpoint: after.srv.URL}))
	_, finishNew := tel.Start(ctx, telemetry.Request{Method: "tools/call", Tool: "mcp_a_after", Protocol: "2025-11-25"})
	finishNew(telemetry.Outcome{})
	finishOld(telemetry.Outcome{ToolError: true})

	// The old pipeline shuts down once its last request ended: its span
	// and its measurement arrive without any flush of ours.
	testwait.For(t, 0, "the old exporters to flush the request in flight at the swap", func() bool {
		return has(before.names(), "tools/call mcp_a_in_flight")
	})
	testwait.For(t, 0, "the old exporters to push their metrics", func() bool {
		before.mu.Lock()
		defer before.mu.Unlock()
		return len(before.metrics) > 0
	})
	shutdown(t, tel)
	if n := before.names(); has(n, "tools/call mcp_a_after") {
		t.Errorf("a request started after the swap went to the old receiver: %q", n)
	}
	if n := after.names(); !has(n, "tools/call mcp_a_after") || has(n, "tools/call mcp_a_in_flight") {
		t.Errorf("the new receiver got %q; want the request started after the swap only", n)
	}
	if pts := after.histogramPoints(t, "mcp.server.operation.duration"); len(pts) != 1 {
		t.Errorf("the new receiver has %d operation points, want the one request after the swap", len(pts))
	}
}

// TestSwapTurnsPrometheusOn: the metrics handler follows Swap: 404 while
// the telemetry has no Prometheus registry, the new registry's text after.
func TestSwapTurnsPrometheusOn(t *testing.T) {
	tel := newTelemetry(t, telemetry.Config{})
	srv := httptest.NewServer(tel.MetricsHandler())
	defer srv.Close()
	get(t, srv.URL, http.StatusNotFound)

	tel.Swap(newTelemetry(t, telemetry.Config{Prometheus: true}))
	_, finish := tel.Start(t.Context(), telemetry.Request{Method: "tools/call", Tool: "mcp_a_echo", Protocol: "2025-11-25"})
	finish(telemetry.Outcome{})
	if body := get(t, srv.URL, http.StatusOK); !strings.Contains(body, `gen_ai_tool_name="mcp_a_echo"`) {
		t.Errorf("/metrics after the swap lacks the call:\n%s", body)
	}
	shutdown(t, tel)
}
