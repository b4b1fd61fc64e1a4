package telemetry_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP/HTTP receiver on loopback: it decodes the protobuf
// export requests the exporters send to /v1/traces and /v1/metrics and keeps
// what they carry.
type receiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics []*metricpb.Metric
	headers []http.Header
}

func newReceiver(t testing.TB) *receiver {
	r := &receiver{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var in coltracepb.ExportTraceServiceRequest
		if !decode(t, w, req, &in) {
			return
		}
		r.mu.Lock()
		r.headers = append(r.headers, req.Header.Clone())
		for _, rs := range in.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				r.spans = append(r.spans, ss.GetSpans()...)
			}
		}
		r.mu.Unlock()
		answer(w, &coltracepb.ExportTraceServiceResponse{})
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		var in colmetricpb.ExportMetricsServiceRequest
		if !decode(t, w, req, &in) {
			return
		}
		r.mu.Lock()
		r.headers = append(r.headers, req.Header.Clone())
		for _, rm := range in.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				r.metrics = append(r.metrics, sm.GetMetrics()...)
			}
		}
		r.mu.Unlock()
		answer(w, &colmetricpb.ExportMetricsServiceResponse{})
	})
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	return r
}

// decode reads one protobuf export request into m; on failure it fails the
// test and answers 400.
func decode(t testing.TB, w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			t.Errorf("receiver: gzip: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err == nil {
		err = proto.Unmarshal(raw, m)
	}
	if err != nil {
		t.Errorf("receiver: %s: %v", req.URL.Path, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func answer(w http.ResponseWriter, m proto.Message) {
	raw, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(raw)
}

// span is the one received span named name.
func (r *receiver) span(t *testing.T, name string) *tracepb.Span {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var found *tracepb.Span
	for _, s := range r.spans {
		if s.GetName() == name {
			if found != nil {
				t.Fatalf("two spans named %q", name)
			}
			found = s
		}
	}
	if found == nil {
		names := make([]string, 0, len(r.spans))
		for _, s := range r.spans {
			names = append(names, s.GetName())
		}
		t.Fatalf("no span named %q; received %q", name, names)
	}
	return found
}

// allSpans is every span received.
func (r *receiver) allSpans() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...)
}

// histogramPoints are the data points of every received histogram named
// name (cumulative: the last export holds the totals).
func (r *receiver) histogramPoints(t *testing.T, name string) []*metricpb.HistogramDataPoint {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var last []*metricpb.HistogramDataPoint
	for _, m := range r.metrics {
		if m.GetName() != name {
			continue
		}
		if m.GetUnit() != "s" {
			t.Errorf("%s: unit %q, want s", name, m.GetUnit())
		}
		h := m.GetHistogram()
		if h == nil {
			t.Fatalf("%s is not a histogram: %v", name, m)
		}
		last = h.GetDataPoints()
	}
	if last == nil {
		t.Fatalf("no histogram %s received", name)
	}
	return last
}

// attrs flattens OTLP attributes into strings by key (ints as decimal).
func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = strconv.FormatInt(v.IntValue, 10)
		default:
			m[kv.GetKey()] = kv.GetValue().String()
		}
	}
	return m
}
