// Package telemetry owns the MCP gateway's traces and metrics: one span and
// one duration measurement per MCP request the gateway serves and per call it
// makes to an upstream server, named and attributed on the OpenTelemetry MCP
// semantic conventions; the W3C trace context carried in a request's
// params._meta; export over OTLP/HTTP; and a Prometheus text endpoint on a
// registry of its own.
//
// It records methods, tool and prompt names, protocol versions, session and
// request ids and error classes. It never records a token, a header, an
// argument value, a result or an error message: an error is recorded by its
// class (error.type) only, because messages may echo what a caller sent.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// DefaultServiceName is the service.name of the gateway's telemetry when
// neither Config.ServiceName nor OTEL_SERVICE_NAME names one.
const DefaultServiceName = "hermes-gateway"

// scopeName is the instrumentation scope of every span and instrument.
const scopeName = "github.com/hermes-agent/hermes/host/gateway/telemetry"

// DurationBuckets are the explicit bucket boundaries, in seconds, that the
// MCP semantic conventions give every mcp.*.duration histogram.
var DurationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// cardinalityLimit bounds the attribute sets one instrument keeps per
// collection. Tool and method names come from clients; past the limit the
// SDK folds new sets into one overflow series instead of growing.
const cardinalityLimit = 2000

// Config is the gateway's `telemetry:` block.
type Config struct {
	// OTLPEndpoint is the base URL of an OTLP/HTTP receiver (a collector's
	// :4318); spans go to its /v1/traces and metrics to its /v1/metrics.
	// Empty: no export, and spans are not recorded (a traceparent a client
	// sent is still passed on upstream).
	OTLPEndpoint string
	// OTLPHeaders are sent with every export (a collector's credentials:
	// never logged).
	OTLPHeaders map[string]string
	// Prometheus serves the metrics on MetricsHandler.
	Prometheus bool
	// ServiceName is the resource's service.name; empty: OTEL_SERVICE_NAME,
	// else DefaultServiceName.
	ServiceName string
	// ServiceVersion is the resource's service.version, when set.
	ServiceVersion string
	// ExportInterval is how often metrics are pushed over OTLP; zero:
	// OTEL_METRIC_EXPORT_INTERVAL, else one minute.
	ExportInterval time.Duration
	// RecordSubject puts the caller's subject on server spans as enduser.id
	// (personal data in the trace backend: off unless asked for; the audit
	// log records who called in any case).
	RecordSubject bool
	// Logger receives export errors (it becomes the process's OpenTelemetry
	// error handler) and one line at start; nil: hclog's default.
	Logger hclog.Logger
}

// Telemetry records the gateway's spans and metrics. Its methods are safe for
// concurrent use.
//
// What it records goes through one pipeline (a tracer, the histograms, the
// exporters behind them) that Swap replaces while requests are being served
// (a reload with another telemetry: block): a request stays on the pipeline
// it started on, so its span and measurements reach the exporters it started
// with, and an old pipeline is shut down, which flushes it, once the last
// request that started on it has ended.
type Telemetry struct {
	propagator propagation.TextMapPropagator
	sets       attrSets

	cur atomic.Pointer[pipeline]
	// retiring are the pipelines Swap replaced that still have requests
	// in flight; Shutdown stops them too.
	mu       sync.Mutex
	retiring map[*pipeline]struct{}
	closed   bool
}

// pipeline is one configuration's tracer, instruments and exporters.
type pipeline struct {
	tracer        trace.Tracer
	recordSubject bool

	serverOp      metric.Float64Histogram
	serverSession metric.Float64Histogram
	clientOp      metric.Float64Histogram

	tracerProvider *sdktrace.TracerProvider // nil when spans are off
	meterProvider  *sdkmetric.MeterProvider // nil when metrics are off
	metrics        http.Handler

	// users counts the requests in flight on the pipeline, plus one while
	// it is the current one; drained is closed when it reaches zero,
	// after which the pipeline is never used again.
	users   atomic.Int64
	drained chan struct{}
}

func newPipeline() *pipeline {
	p := &pipeline{
		tracer:  tracenoop.NewTracerProvider().Tracer(scopeName),
		metrics: http.NotFoundHandler(),
		drained: make(chan struct{}),
	}
	p.users.Store(1)
	return p
}

// tryAcquire counts a request on p, unless p has drained.
func (p *pipeline) tryAcquire() bool {
	for {
		n := p.users.Load()
		if n == 0 {
			return false
		}
		if p.users.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release ends a request's use of p (or, once, p being the current one).
func (p *pipeline) release() {
	if p.users.Add(-1) == 0 {
		close(p.drained)
	}
}

// acquire is the current pipeline, counted until its release.
func (t *Telemetry) acquire() *pipeline {
	for {
		// A pipeline that drained was replaced before it could: the
		// next load finds its successor.
		if p := t.cur.Load(); p.tryAcquire() {
			return p
		}
	}
}

// New builds the gateway's telemetry from cfg: an OTLP/HTTP span and metric
// exporter when cfg.OTLPEndpoint is set, a Prometheus registry of its own when
// cfg.Prometheus is. With neither, every method is a cheap no-op apart from
// passing a client's trace context on upstream.
func New(ctx context.Context, cfg Config) (*Telemetry, error) {
	p, err := build(ctx, cfg)
	if err != nil {
		return nil, err
	}
	t := &Telemetry{propagator: propagation.TraceContext{}}
	t.cur.Store(p)
	return t, nil
}

// build makes the pipeline cfg describes.
func build(ctx context.Context, cfg Config) (*pipeline, error) {
	log := cfg.Logger
	if log == nil {
		log = hclog.Default()
	}
	log = log.Named("telemetry")
	p := newPipeline()
	p.recordSubject = cfg.RecordSubject
	var base *url.URL
	if cfg.OTLPEndpoint != "" {
		var err error
		if base, err = parseEndpoint(cfg.OTLPEndpoint); err != nil {
			return nil, err
		}
	}
	if base == nil && !cfg.Prometheus {
		return p, p.instruments(metricnoop.NewMeterProvider().Meter(scopeName))
	}

	res, err := newResource(ctx, cfg)
	if err != nil {
		return nil, err
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("export failed", "error", err)
	}))

	metricOpts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithCardinalityLimit(cardinalityLimit)}
	if base != nil {
		traceExp, err := otlptracehttp.New(ctx,
			otlptracehttp.WithEndpointURL(base.JoinPath("v1", "traces").String()),
			otlptracehttp.WithHeaders(cfg.OTLPHeaders))
		if err != nil {
			return nil, fmt.Errorf("telemetry: otlp span exporter for %s: %w", base.Redacted(), err)
		}
		p.tracerProvider = sdktrace.NewTracerProvider(
			sdktrace.WithResource(res),
			sdktrace.WithBatcher(traceExp),
			sdktrace.WithRawSpanLimits(spanLimits()))
		p.tracer = p.tracerProvider.Tracer(scopeName)

		metricExp, err := otlpmetrichttp.New(ctx,
			otlpmetrichttp.WithEndpointURL(base.JoinPath("v1", "metrics").String()),
			otlpmetrichttp.WithHeaders(cfg.OTLPHeaders))
		if err != nil {
			_ = p.tracerProvider.Shutdown(ctx)
			return nil, fmt.Errorf("telemetry: otlp metric exporter for %s: %w", base.Redacted(), err)
		}
		var readerOpts []sdkmetric.PeriodicReaderOption
		if cfg.ExportInterval > 0 {
			readerOpts = append(readerOpts, sdkmetric.WithInterval(cfg.ExportInterval))
		}
		metricOpts = append(metricOpts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExp, readerOpts...)))
		log.Info("exporting spans and metrics over OTLP/HTTP", "endpoint", base.Redacted())
	}
	if cfg.Prometheus {
		reg := prometheus.NewRegistry()
		exp, err := otelprom.New(otelprom.WithRegisterer(reg))
		if err != nil {
			p.shutdownTraces(ctx)
			return nil, fmt.Errorf("telemetry: prometheus exporter: %w", err)
		}
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		metricOpts = append(metricOpts, sdkmetric.WithReader(exp))
		p.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: log.StandardLogger(nil)})
	}
	p.meterProvider = sdkmetric.NewMeterProvider(metricOpts...)
	if err := p.instruments(p.meterProvider.Meter(scopeName)); err != nil {
		_ = p.shutdown(ctx)
		return nil, err
	}
	return p, nil
}

// parseEndpoint checks an OTLP base URL; its errors name the endpoint
// without any user information it carries.
func parseEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the whole URL, password and all: keep its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("telemetry: otlp_endpoint is not a URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("telemetry: otlp_endpoint %s: want an http or https URL", u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("telemetry: otlp_endpoint %s: no host", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("telemetry: otlp_endpoint %s: a base URL takes no query or fragment", u.Redacted())
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

// newResource describes the gateway process: the service name and version
// from cfg (else from OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES) and the SDK.
func newResource(ctx context.Context, cfg Config) (*resource.Resource, error) {
	opts := []resource.Option{
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(semconv.ServiceName(DefaultServiceName)),
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
	}
	if cfg.ServiceName != "" {
		opts = append(opts, resource.WithAttributes(semconv.ServiceName(cfg.ServiceName)))
	}
	if cfg.ServiceVersion != "" {
		opts = append(opts, resource.WithAttributes(semconv.ServiceVersion(cfg.ServiceVersion)))
	}
	res, err := resource.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	return res, nil
}

// spanLimits bound what one span keeps: attribute values are clipped (tool
// names and request ids come from clients) and a span holds few attributes.
func spanLimits() sdktrace.SpanLimits {
	l := sdktrace.NewSpanLimits()
	l.AttributeValueLengthLimit = maxValueLen
	l.AttributeCountLimit = 32
	l.LinkCountLimit = 4
	return l
}

// instruments creates the three histograms on m with the conventions' names,
// unit and bucket boundaries.
func (p *pipeline) instruments(m metric.Meter) error {
	var err error
	hist := func(name, desc string) metric.Float64Histogram {
		h, e := m.Float64Histogram(name,
			metric.WithUnit("s"),
			metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(DurationBuckets...))
		if e != nil {
			err = errors.Join(err, fmt.Errorf("telemetry: histogram %s: %w", name, e))
		}
		return h
	}
	p.serverOp = hist("mcp.server.operation.duration",
		"MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.")
	p.serverSession = hist("mcp.server.session.duration",
		"The duration of the MCP session as observed on the MCP server.")
	p.clientOp = hist("mcp.client.operation.duration",
		"The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.")
	return err
}

// MetricsHandler serves the metrics in the Prometheus text format (the
// gateway mounts it at /metrics); it answers 404 while Prometheus is off
// (cfg.Prometheus false), and follows Swap.
func (t *Telemetry) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := t.acquire()
		defer p.release()
		p.metrics.ServeHTTP(w, r)
	})
}

// Flush exports the spans and metrics recorded so far.
func (t *Telemetry) Flush(ctx context.Context) error {
	p := t.acquire()
	defer p.release()
	var err error
	if p.tracerProvider != nil {
		err = p.tracerProvider.ForceFlush(ctx)
	}
	if p.meterProvider != nil {
		err = errors.Join(err, p.meterProvider.ForceFlush(ctx))
	}
	if err != nil {
		return fmt.Errorf("telemetry: flush: %w", err)
	}
	return nil
}

// Swap makes n's pipeline (its exporters, its Prometheus registry) the one
// t records on from now on; n is left with none (its methods record
// nothing). The requests in flight finish on the pipeline they started on,
// which is then shut down, flushing what it holds: no span or measurement
// is lost across the swap. Shutdown(t) stops the new pipeline and any old
// one still waiting. A Prometheus registry starts again from zero (a counter
// reset, which Prometheus handles).
func (t *Telemetry) Swap(n *Telemetry) {
	none := newPipeline()
	_ = none.instruments(metricnoop.NewMeterProvider().Meter(scopeName))
	np := n.cur.Swap(none)
	t.mu.Lock()
	if t.retiring == nil {
		t.retiring = map[*pipeline]struct{}{}
	}
	old := t.cur.Swap(np)
	t.retiring[old] = struct{}{}
	closed := t.closed
	t.mu.Unlock()
	if closed {
		_ = np.shutdown(context.Background())
	}
	go func() {
		<-old.drained
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = old.shutdown(ctx)
		t.mu.Lock()
		delete(t.retiring, old)
		t.mu.Unlock()
	}()
	old.release()
}

// Shutdown exports what is pending and stops the exporters; ctx bounds the
// wait for a receiver that does not answer. Spans and measurements after it
// are dropped.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	t.closed = true
	ps := []*pipeline{t.cur.Load()}
	for p := range t.retiring {
		ps = append(ps, p)
	}
	t.mu.Unlock()
	var err error
	for _, p := range ps {
		err = errors.Join(err, p.shutdown(ctx))
	}
	return err
}

// shutdown flushes and stops p's exporters; a second call does nothing.
func (p *pipeline) shutdown(ctx context.Context) error {
	var err error
	if p.tracerProvider != nil {
		err = p.tracerProvider.Shutdown(ctx)
	}
	if p.meterProvider != nil {
		err = errors.Join(err, p.meterProvider.Shutdown(ctx))
	}
	if err != nil {
		return fmt.Errorf("telemetry: shutdown: %w", err)
	}
	return nil
}

// shutdownTraces stops the span exporter of a build that fails later.
func (p *pipeline) shutdownTraces(ctx context.Context) {
	if p.tracerProvider != nil {
		_ = p.tracerProvider.Shutdown(ctx)
	}
}
