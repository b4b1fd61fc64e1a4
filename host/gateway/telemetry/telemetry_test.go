package telemetry_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/gateway/telemetry"
	"go.opentelemetry.io/otel/trace"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// The trace context a client sends in params._meta.
const (
	clientTraceID    = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID     = "00f067aa0ba902b7"
	clientTraceparnt = "00-" + clientTraceID + "-" + clientSpanID + "-01"
	clientTracestate = "rojo=00f067aa0ba902b7"
)

// secret stands for a token and an argument value a request carries: it
// must appear in no span and no metric.
const secret = "s3cr3t-token-value"

func newTelemetry(t *testing.T, cfg telemetry.Config) *telemetry.Telemetry {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	tel, err := telemetry.New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return tel
}

// shutdown flushes everything to the receiver: when it returns, the
// receiver holds every span and the final metrics.
func shutdown(t *testing.T, tel *telemetry.Telemetry) {
	t.Helper()
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func hexID(b []byte) string { return hex.EncodeToString(b) }

// TestSpansAndMetricsOverOTLP serves a tools/call whose _meta carries a
// client's trace context, calls the upstream for it, serves a tools/list and
// ends a session, and checks what a loopback OTLP/HTTP receiver gets.
func TestSpansAndMetricsOverOTLP(t *testing.T) {
	rcv := newReceiver(t)
	tel := newTelemetry(t, telemetry.Config{
		OTLPEndpoint: rcv.srv.URL,
		OTLPHeaders:  map[string]string{"X-Collector-Key": "collector-key"},
		ServiceName:  "gateway-under-test",
	})
	ctx := t.Context()

	sess := tel.SessionStarted("2025-11-25")
	served, finish := tel.Start(ctx, telemetry.Request{
		Method:    "tools/call",
		Tool:      "mcp_everything_echo",
		RequestID: "7",
		Protocol:  "2025-11-25",
		SessionID: "sess-1",
		Subject:   "alice",
		Server:    "everything",
		Meta: map[string]any{
			"traceparent":   clientTraceparnt,
			"tracestate":    clientTracestate,
			"progressToken": 3,
			"authorization": "Bearer " + secret,
		},
	})
	_, carrier, finishUp := tel.StartUpstream(served, telemetry.Request{
		Method:    "tools/call",
		Tool:      "echo",
		RequestID: "1",
		Protocol:  "2025-06-18",
		Server:    "everything",
		Transport: telemetry.TransportPipe,
	})
	finishUp(telemetry.Outcome{})
	finish(telemetry.Outcome{ToolError: true})

	_, finishList := tel.Start(ctx, telemetry.Request{Method: "tools/list", RequestID: "8", Protocol: "2025-11-25", SessionID: "sess-1"})
	finishList(telemetry.Outcome{})
	_, finishBad := tel.Start(ctx, telemetry.Request{Method: "tools/call", Tool: "mcp_everything_add", RequestID: "9", Protocol: "2025-11-25"})
	finishBad(telemetry.Outcome{Code: -32602, Err: errors.New("bad argument " + secret)})
	tel.SessionEnded(ctx, sess, telemetry.Outcome{})
	shutdown(t, tel)

	// The server span: the client's span is its parent.
	srv := rcv.span(t, "tools/call mcp_everything_echo")
	if srv.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("server span kind %v", srv.GetKind())
	}
	if got := hexID(srv.GetTraceId()); got != clientTraceID {
		t.Errorf("server span trace %s, want the client's %s", got, clientTraceID)
	}
	if got := hexID(srv.GetParentSpanId()); got != clientSpanID {
		t.Errorf("server span parent %s, want the client's span %s", got, clientSpanID)
	}
	if srv.GetTraceState() != clientTracestate {
		t.Errorf("server span tracestate %q, want %q", srv.GetTraceState(), clientTracestate)
	}
	wantAttrs(t, "server span", attrs(srv.GetAttributes()), map[string]string{
		"mcp.method.name":       "tools/call",
		"gen_ai.tool.name":      "mcp_everything_echo",
		"gen_ai.operation.name": "execute_tool",
		"error.type":            "tool_error",
		"jsonrpc.request.id":    "7",
		"mcp.protocol.version":  "2025-11-25",
		"mcp.session.id":        "sess-1",
		"hermes.mcp.server":     "everything",
		"network.transport":     "tcp",
		"network.protocol.name": "http",
	}, "enduser.id", "rpc.response.status_code")
	if srv.GetStatus().GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("server span status %v, want ERROR for a tool error", srv.GetStatus())
	}

	// The upstream span continues the trace as the server span's child, and
	// the carrier for the upstream's _meta names the upstream span.
	up := rcv.span(t, "tools/call echo")
	if up.GetKind() != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("upstream span kind %v", up.GetKind())
	}
	if hexID(up.GetTraceId()) != clientTraceID || hexID(up.GetParentSpanId()) != hexID(srv.GetSpanId()) {
		t.Errorf("upstream span trace %x parent %x, want trace %s parent %x",
			up.GetTraceId(), up.GetParentSpanId(), clientTraceID, srv.GetSpanId())
	}
	if want := "00-" + clientTraceID + "-" + hexID(up.GetSpanId()) + "-01"; carrier["traceparent"] != want {
		t.Errorf("upstream traceparent %q, want %q", carrier["traceparent"], want)
	}
	if carrier["tracestate"] != clientTracestate {
		t.Errorf("upstream tracestate %q, want %q", carrier["tracestate"], clientTracestate)
	}
	wantAttrs(t, "upstream span", attrs(up.GetAttributes()), map[string]string{
		"mcp.method.name":       "tools/call",
		"gen_ai.tool.name":      "echo",
		"gen_ai.operation.name": "execute_tool",
		"jsonrpc.request.id":    "1",
		"mcp.protocol.version":  "2025-06-18",
		"network.transport":     "pipe",
		"hermes.mcp.server":     "everything",
	}, "error.type", "network.protocol.name")
	if up.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("upstream span status %v for a success", up.GetStatus())
	}

	// A request without a tool is named by its method alone and has no
	// parent in _meta: it starts a trace.
	list := rcv.span(t, "tools/list")
	if len(list.GetParentSpanId()) != 0 || hexID(list.GetTraceId()) == clientTraceID {
		t.Errorf("tools/list span: parent %x trace %x, want a new trace", list.GetParentSpanId(), list.GetTraceId())
	}
	wantAttrs(t, "tools/list span", attrs(list.GetAttributes()), map[string]string{
		"mcp.method.name": "tools/list", "jsonrpc.request.id": "8",
	}, "gen_ai.operation.name", "gen_ai.tool.name", "error.type")

	// A JSON-RPC error: its code is the error class.
	bad := rcv.span(t, "tools/call mcp_everything_add")
	wantAttrs(t, "error span", attrs(bad.GetAttributes()), map[string]string{
		"error.type": "-32602", "rpc.response.status_code": "-32602",
	})
	if bad.GetStatus().GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("error span status %v", bad.GetStatus())
	}

	// Metrics: the conventions' histograms, buckets and attributes, and no
	// per-request or per-person attribute.
	points := rcv.histogramPoints(t, "mcp.server.operation.duration")
	toolErr := point(t, points, map[string]string{"mcp.method.name": "tools/call", "error.type": "tool_error"})
	wantAttrs(t, "server operation point", toolErr, map[string]string{
		"gen_ai.tool.name":      "mcp_everything_echo",
		"gen_ai.operation.name": "execute_tool",
		"mcp.protocol.version":  "2025-11-25",
		"network.transport":     "tcp",
	}, "mcp.session.id", "jsonrpc.request.id", "enduser.id")
	point(t, points, map[string]string{"mcp.method.name": "tools/list"})
	point(t, points, map[string]string{"error.type": "-32602", "rpc.response.status_code": "-32602"})
	for _, p := range points {
		if !slices.Equal(p.GetExplicitBounds(), telemetry.DurationBuckets) {
			t.Errorf("server operation buckets %v, want %v", p.GetExplicitBounds(), telemetry.DurationBuckets)
		}
		if p.GetCount() != 1 {
			t.Errorf("server operation point %v counted %d, want 1", attrs(p.GetAttributes()), p.GetCount())
		}
	}
	client := rcv.histogramPoints(t, "mcp.client.operation.duration")
	wantAttrs(t, "client operation point", point(t, client, map[string]string{"mcp.method.name": "tools/call"}), map[string]string{
		"gen_ai.tool.name": "echo", "network.transport": "pipe", "hermes.mcp.server": "everything",
	}, "error.type")
	session := rcv.histogramPoints(t, "mcp.server.session.duration")
	wantAttrs(t, "session point", point(t, session, map[string]string{"mcp.protocol.version": "2025-11-25"}), nil, "error.type")

	// No token, argument value or error message anywhere, and the
	// collector's own header reached it.
	for _, s := range rcv.allSpans() {
		for k, v := range attrs(s.GetAttributes()) {
			if strings.Contains(v, secret) || strings.Contains(v, "Bearer") {
				t.Errorf("span %q attribute %s=%q carries a secret", s.GetName(), k, v)
			}
		}
		if strings.Contains(s.GetStatus().GetMessage(), secret) {
			t.Errorf("span %q status carries an error message: %q", s.GetName(), s.GetStatus().GetMessage())
		}
		if len(s.GetEvents()) != 0 {
			t.Errorf("span %q has events %v", s.GetName(), s.GetEvents())
		}
	}
	rcv.mu.Lock()
	for _, h := range rcv.headers {
		if h.Get("X-Collector-Key") != "collector-key" {
			t.Errorf("export without the configured header: %v", h)
		}
	}
	rcv.mu.Unlock()
}

// TestUpstreamHermesContinuesTrace hands the carrier StartUpstream returns
// to a second gateway as its request's _meta, as a chain of two gateways
// would: the second one's server span is the first one's client span's child.
func TestUpstreamHermesContinuesTrace(t *testing.T) {
	rcv := newReceiver(t)
	first := newTelemetry(t, telemetry.Config{OTLPEndpoint: rcv.srv.URL, ServiceName: "first"})
	second := newTelemetry(t, telemetry.Config{OTLPEndpoint: rcv.srv.URL, ServiceName: "second"})

	ctx, finish := first.Start(t.Context(), telemetry.Request{Method: "prompts/get", Prompt: "review", RequestID: "1"})
	_, carrier, finishUp := first.StartUpstream(ctx, telemetry.Request{Method: "prompts/get", Prompt: "review-upstream", RequestID: "2", ServerAddress: "upstream.example", ServerPort: 8443})
	meta := map[string]any{}
	for k, v := range carrier {
		meta[k] = v
	}
	_, finishSecond := second.Start(t.Context(), telemetry.Request{Method: "prompts/get", Prompt: "review-second", RequestID: "2", Meta: meta})
	finishSecond(telemetry.Outcome{})
	finishUp(telemetry.Outcome{Err: fmt.Errorf("call: %w", &net.OpError{Op: "dial", Err: errors.New("refused")})})
	finish(telemetry.Outcome{ErrorType: "upstream_unavailable"})
	shutdown(t, second)
	shutdown(t, first)

	root := rcv.span(t, "prompts/get review")
	up := rcv.span(t, "prompts/get review-upstream")
	next := rcv.span(t, "prompts/get review-second")
	if len(root.GetParentSpanId()) != 0 {
		t.Errorf("root span has parent %x", root.GetParentSpanId())
	}
	if !slices.Equal(up.GetParentSpanId(), root.GetSpanId()) || !slices.Equal(next.GetParentSpanId(), up.GetSpanId()) {
		t.Errorf("chain broken: root %x, upstream %x (parent %x), second %x (parent %x)",
			root.GetSpanId(), up.GetSpanId(), up.GetParentSpanId(), next.GetSpanId(), next.GetParentSpanId())
	}
	if !slices.Equal(next.GetTraceId(), root.GetTraceId()) {
		t.Errorf("second gateway trace %x, want %x", next.GetTraceId(), root.GetTraceId())
	}
	wantAttrs(t, "root", attrs(root.GetAttributes()), map[string]string{
		"gen_ai.prompt.name": "review", "error.type": "upstream_unavailable",
	}, "gen_ai.operation.name")
	wantAttrs(t, "upstream", attrs(up.GetAttributes()), map[string]string{
		"error.type": "*net.OpError", "server.address": "upstream.example", "server.port": "8443",
	})
	wantAttrs(t, "client point", point(t, rcv.histogramPoints(t, "mcp.client.operation.duration"), nil), map[string]string{
		"error.type": "*net.OpError", "server.address": "upstream.example", "gen_ai.prompt.name": "review-upstream",
	})
}

// TestTransportSpanBecomesLink: with a trace context in _meta, a span already
// in the context (the HTTP request's) is linked, not the parent; without
// one, it is the parent.
func TestTransportSpanBecomesLink(t *testing.T) {
	rcv := newReceiver(t)
	tel := newTelemetry(t, telemetry.Config{OTLPEndpoint: rcv.srv.URL})
	transport := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:     trace.SpanID{1, 1, 1, 1, 1, 1, 1, 1},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(t.Context(), transport)

	_, finish := tel.Start(ctx, telemetry.Request{Method: "ping", Meta: map[string]any{"traceparent": clientTraceparnt}})
	finish(telemetry.Outcome{})
	_, finish = tel.Start(ctx, telemetry.Request{Method: "resources/list", Meta: map[string]any{"traceparent": 12}})
	finish(telemetry.Outcome{})
	shutdown(t, tel)

	ping := rcv.span(t, "ping")
	if hexID(ping.GetParentSpanId()) != clientSpanID {
		t.Errorf("ping parent %x, want the _meta span %s", ping.GetParentSpanId(), clientSpanID)
	}
	if len(ping.GetLinks()) != 1 || hexID(ping.GetLinks()[0].GetSpanId()) != transport.SpanID().String() {
		t.Errorf("ping links %v, want the transport span %s", ping.GetLinks(), transport.SpanID())
	}
	list := rcv.span(t, "resources/list")
	if hexID(list.GetParentSpanId()) != transport.SpanID().String() || len(list.GetLinks()) != 0 {
		t.Errorf("resources/list parent %x links %v, want the transport span as parent (a non-string traceparent is ignored)",
			list.GetParentSpanId(), list.GetLinks())
	}
}

// TestPrometheusHandler reads /metrics as Prometheus would.
func TestPrometheusHandler(t *testing.T) {
	tel := newTelemetry(t, telemetry.Config{Prometheus: true})
	ctx := t.Context()
	sctx, finish := tel.Start(ctx, telemetry.Request{Method: "tools/call", Tool: "mcp_everything_echo", Protocol: "2025-11-25", SessionID: "sess-9", RequestID: "1"})
	_, carrier, finishUp := tel.StartUpstream(sctx, telemetry.Request{Method: "tools/call", Tool: "echo", Transport: telemetry.TransportPipe})
	finishUp(telemetry.Outcome{ToolError: true})
	finish(telemetry.Outcome{ToolError: true})
	tel.SessionEnded(ctx, telemetry.Session{Protocol: "2025-11-25", Started: time.Now().Add(-3 * time.Second)}, telemetry.Outcome{})
	if len(carrier) != 0 {
		t.Errorf("no spans and no client trace context, yet a carrier %v", carrier)
	}

	srv := httptest.NewServer(tel.MetricsHandler())
	defer srv.Close()
	body := get(t, srv.URL, http.StatusOK)
	for _, want := range []string{
		`mcp_server_operation_duration_seconds_bucket{`,
		`le="0.01"`,
		`le="300"`,
		`error_type="tool_error"`,
		`gen_ai_operation_name="execute_tool"`,
		`gen_ai_tool_name="mcp_everything_echo"`,
		`mcp_client_operation_duration_seconds_count{`,
		`network_transport="pipe"`,
		`mcp_server_session_duration_seconds_count{`,
		`mcp_server_session_duration_seconds_bucket{`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, body)
		}
	}
	for _, never := range []string{"sess-9", "jsonrpc_request_id", "mcp_session_id"} {
		if strings.Contains(body, never) {
			t.Errorf("/metrics carries %s", never)
		}
	}
	if !strings.Contains(body, `mcp_server_session_duration_seconds_bucket{`) ||
		!strings.Contains(sessionBucket(body, "5"), " 1") {
		t.Errorf("a 3 s session is not in the le=5 bucket:\n%s", body)
	}
	shutdown(t, tel)

	off := newTelemetry(t, telemetry.Config{})
	offSrv := httptest.NewServer(off.MetricsHandler())
	defer offSrv.Close()
	get(t, offSrv.URL, http.StatusNotFound)
}

// sessionBucket is the session histogram's line for bucket le.
func sessionBucket(body, le string) string {
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "mcp_server_session_duration_seconds_bucket{") && strings.Contains(line, `le="`+le+`"`) {
			return line
		}
	}
	return ""
}

func get(t *testing.T, url string, status int) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode != status {
		t.Fatalf("GET %s: %s, want %d", url, resp.Status, status)
	}
	return string(raw)
}

// TestTraceContextPassesThroughWithoutExport: with telemetry off, a client's
// trace context still reaches the upstream unchanged.
func TestTraceContextPassesThroughWithoutExport(t *testing.T) {
	tel := newTelemetry(t, telemetry.Config{})
	ctx, finish := tel.Start(t.Context(), telemetry.Request{Method: "tools/call", Tool: "x", Meta: map[string]any{
		"traceparent": clientTraceparnt, "tracestate": clientTracestate,
	}})
	_, carrier, finishUp := tel.StartUpstream(ctx, telemetry.Request{Method: "tools/call", Tool: "x"})
	finishUp(telemetry.Outcome{})
	finish(telemetry.Outcome{})
	tel.SessionEnded(t.Context(), tel.SessionStarted("2025-11-25"), telemetry.Outcome{})
	if carrier["traceparent"] != clientTraceparnt || carrier["tracestate"] != clientTracestate {
		t.Errorf("carrier %v, want the client's trace context", carrier)
	}
	shutdown(t, tel)
}

// TestRecordSubjectOptIn: the subject reaches spans only when asked, and
// metrics never.
func TestRecordSubjectOptIn(t *testing.T) {
	rcv := newReceiver(t)
	tel := newTelemetry(t, telemetry.Config{OTLPEndpoint: rcv.srv.URL, RecordSubject: true})
	_, finish := tel.Start(t.Context(), telemetry.Request{Method: "tools/list", Subject: "alice"})
	finish(telemetry.Outcome{})
	shutdown(t, tel)
	wantAttrs(t, "span", attrs(rcv.span(t, "tools/list").GetAttributes()), map[string]string{"enduser.id": "alice"})
	wantAttrs(t, "point", point(t, rcv.histogramPoints(t, "mcp.server.operation.duration"), nil), nil, "enduser.id")
}

// TestClientValuesClipped: a client-chosen name or id of any length is
// recorded clipped, as valid UTF-8.
func TestClientValuesClipped(t *testing.T) {
	rcv := newReceiver(t)
	tel := newTelemetry(t, telemetry.Config{OTLPEndpoint: rcv.srv.URL})
	long := "a" + strings.Repeat("é", 4000)
	_, finish := tel.Start(t.Context(), telemetry.Request{Method: "tools/call", Tool: long, RequestID: long})
	finish(telemetry.Outcome{})
	shutdown(t, tel)
	spans := rcv.allSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	if n := len(spans[0].GetName()); n > 600 || !utf8.ValidString(spans[0].GetName()) {
		t.Errorf("span name of %d bytes, valid UTF-8 %v", n, utf8.ValidString(spans[0].GetName()))
	}
	for k, v := range attrs(spans[0].GetAttributes()) {
		if len(v) > 256 || !utf8.ValidString(v) {
			t.Errorf("attribute %s: %d bytes, valid UTF-8 %v", k, len(v), utf8.ValidString(v))
		}
	}
}

// TestBadEndpoint: a bad otlp_endpoint fails New with a one-line error that
// names it without its password.
func TestBadEndpoint(t *testing.T) {
	for _, endpoint := range []string{
		"collector:4318",
		"ftp://collector:4318",
		"http://",
		"http://user:hunter2@collector:4318/?q=1",
		"http://collector:4318/\x7f",
	} {
		_, err := telemetry.New(t.Context(), telemetry.Config{OTLPEndpoint: endpoint, Logger: hclog.NewNullLogger()})
		if err == nil {
			t.Errorf("%q: accepted", endpoint)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "otlp_endpoint") || strings.Contains(msg, "hunter2") || strings.Contains(msg, "\n") {
			t.Errorf("%q: error %q", endpoint, msg)
		}
	}
}

// wantAttrs checks that got holds want and none of the keys in absent.
func wantAttrs(t *testing.T, what string, got, want map[string]string, absent ...string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s=%q, want %q (all: %v)", what, k, got[k], v, got)
		}
	}
	for _, k := range absent {
		if v, ok := got[k]; ok {
			t.Errorf("%s: has %s=%q", what, k, v)
		}
	}
}

// point is the one data point whose attributes include match.
func point(t *testing.T, points []*metricpb.HistogramDataPoint, match map[string]string) map[string]string {
	t.Helper()
	var found map[string]string
	for _, p := range points {
		a := attrs(p.GetAttributes())
		ok := true
		for k, v := range match {
			ok = ok && a[k] == v
		}
		if ok {
			if found != nil {
				t.Fatalf("two data points match %v: %v and %v", match, found, a)
			}
			found = a
		}
	}
	if found == nil {
		t.Fatalf("no data point matches %v", match)
	}
	return found
}

// TestConcurrentRequests serves requests from many goroutines (run with
// -race): every one is counted once, under its own tool.
func TestConcurrentRequests(t *testing.T) {
	rcv := newReceiver(t)
	tel := newTelemetry(t, telemetry.Config{OTLPEndpoint: rcv.srv.URL, Prometheus: true})
	const workers, each = 8, 25
	done := make(chan struct{})
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range each {
				ctx, finish := tel.Start(t.Context(), telemetry.Request{Method: "tools/call", Tool: fmt.Sprintf("tool_%d", w), RequestID: fmt.Sprint(i)})
				_, _, finishUp := tel.StartUpstream(ctx, telemetry.Request{Method: "tools/call", Tool: "echo"})
				finishUp(telemetry.Outcome{ToolError: i%2 == 0})
				finish(telemetry.Outcome{ToolError: i%2 == 0})
			}
		}()
	}
	for range workers {
		<-done
	}
	shutdown(t, tel)
	if n := len(rcv.allSpans()); n != 2*workers*each {
		t.Errorf("%d spans, want %d", n, 2*workers*each)
	}
	var total uint64
	for _, p := range rcv.histogramPoints(t, "mcp.server.operation.duration") {
		total += p.GetCount()
	}
	if total != workers*each {
		t.Errorf("server operations counted %d, want %d", total, workers*each)
	}
	for w := range workers {
		point(t, rcv.histogramPoints(t, "mcp.server.operation.duration"), map[string]string{"gen_ai.tool.name": fmt.Sprintf("tool_%d", w), "error.type": "tool_error"})
	}
}
