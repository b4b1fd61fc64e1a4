package gateway_test

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/hermes-agent/hermes/host/gateway/telemetry"
)

// spanSink is an OTLP/HTTP receiver of traces on loopback (uncompressed
// protobuf, as the gateway's exporter is configured in these tests).
type spanSink struct {
	url   string
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newSpanSink(t *testing.T) *spanSink {
	s := &spanSink{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" {
			w.WriteHeader(http.StatusOK)
			return
		}
		raw, err := io.ReadAll(r.Body)
		var in coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(raw, &in)
		}
		if err != nil {
			t.Errorf("span sink: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		for _, rs := range in.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				s.spans = append(s.spans, ss.GetSpans()...)
			}
		}
		s.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// span is the one span named name.
func (s *spanSink) span(t *testing.T, name string) *tracepb.Span {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, sp := range s.spans {
		if sp.GetName() == name {
			return sp
		}
		names = append(names, sp.GetName())
	}
	t.Fatalf("no span %q; received %q", name, names)
	return nil
}

const (
	clientTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID  = "00f067aa0ba902b7"
)

// echoMeta calls echo_meta through the gateway at url with the client's
// trace context and returns the _meta the upstream received.
func echoMeta(t *testing.T, url string) map[string]any {
	t.Helper()
	alice := connect(t, url, "token-of-alice", "2025-11-25")
	res, err := alice.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_echo_meta",
		Meta: &mcp.Meta{AdditionalFields: map[string]any{"traceparent": "00-" + clientTraceID + "-" + clientSpanID + "-01", "tracestate": "rojo=1"}}}})
	if err != nil || res.IsError {
		t.Fatalf("echo_meta: %v %+v", err, res)
	}
	var meta map[string]any
	if err := json.Unmarshal([]byte(text(res)), &meta); err != nil {
		t.Fatalf("echo_meta's answer %q: %v", text(res), err)
	}
	return meta
}

// The upstream's call continues the gateway's trace: its _meta carries
// the traceparent of the gateway's upstream span, a child of the span
// serving the client's call, itself a child of the client's span, and the
// progress token stays the registry's own.
func TestTraceContextPassedUpstream(t *testing.T) {
	t.Parallel()
	sink := newSpanSink(t)
	tel, err := telemetry.New(t.Context(), telemetry.Config{OTLPEndpoint: sink.url, ServiceName: "gateway-under-test", Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	f := newRelayFront(t, `["--echo-meta"]`, tel)
	meta := echoMeta(t, f.url)
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	served := sink.span(t, "tools/call mcp_ts_echo_meta")
	up := sink.span(t, "tools/call echo_meta")
	if got := hex.EncodeToString(served.GetParentSpanId()); got != clientSpanID || hex.EncodeToString(served.GetTraceId()) != clientTraceID {
		t.Fatalf("the served span's parent is %s in trace %x, want the client's span", got, served.GetTraceId())
	}
	if up.GetKind() != tracepb.Span_SPAN_KIND_CLIENT || string(up.GetParentSpanId()) != string(served.GetSpanId()) {
		t.Fatalf("the upstream span (kind %v) is not a child of the served span", up.GetKind())
	}
	want := "00-" + clientTraceID + "-" + hex.EncodeToString(up.GetSpanId()) + "-01"
	if meta["traceparent"] != want {
		t.Fatalf("the upstream received traceparent %v, want %s (the gateway's upstream span)", meta["traceparent"], want)
	}
	if tok, _ := meta["progressToken"].(string); !strings.HasPrefix(tok, "hermes-") {
		t.Fatalf("the upstream received progress token %v, want the registry's own", meta["progressToken"])
	}
}

// Without telemetry the client's trace context passes on as it came.
func TestTraceContextPassedOnWithoutTelemetry(t *testing.T) {
	t.Parallel()
	f := newRelayFront(t, `["--echo-meta"]`, nil)
	meta := echoMeta(t, f.url)
	if meta["traceparent"] != "00-"+clientTraceID+"-"+clientSpanID+"-01" || meta["tracestate"] != "rojo=1" {
		t.Fatalf("the upstream received %v", meta)
	}
}
