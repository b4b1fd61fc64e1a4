package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// The attributes of the MCP semantic conventions (their Go constants left the
// semconv packages when the GenAI conventions moved to a repository of their
// own) and hermes's own.
const (
	keyMethod          = attribute.Key("mcp.method.name")
	keyProtocol        = attribute.Key("mcp.protocol.version")
	keySession         = attribute.Key("mcp.session.id")
	keyToolName        = attribute.Key("gen_ai.tool.name")
	keyPromptName      = attribute.Key("gen_ai.prompt.name")
	keyOperation       = attribute.Key("gen_ai.operation.name")
	keyRequestID       = attribute.Key("jsonrpc.request.id")
	keyRPCStatus       = semconv.RPCResponseStatusCodeKey
	keyErrorType       = semconv.ErrorTypeKey
	keyNetTransport    = semconv.NetworkTransportKey
	keyNetProtocolName = semconv.NetworkProtocolNameKey
	keyServerAddress   = semconv.ServerAddressKey
	keyServerPort      = semconv.ServerPortKey
	keyEnduser         = semconv.EnduserIDKey
	// keyUpstream names the configured server a request is routed to or an
	// upstream call is made to.
	keyUpstream = attribute.Key("hermes.mcp.server")
)

const (
	// MethodToolsCall is the one method whose operation is execute_tool.
	MethodToolsCall = "tools/call"
	// ErrorTypeToolError is error.type for a tool result with isError.
	ErrorTypeToolError = "tool_error"
	// TransportTCP and TransportPipe are network.transport: streamable HTTP
	// and stdio.
	TransportTCP  = "tcp"
	TransportPipe = "pipe"
	// maxValueLen clips every string this package records: names, ids and
	// versions come from clients.
	maxValueLen = 256
)

// Request describes one MCP request or notification: one the gateway serves
// (Start) or one it sends upstream (StartUpstream). Only the fields below are
// recorded; nothing of the arguments.
type Request struct {
	// Method is the JSON-RPC method (mcp.method.name), e.g. "tools/call".
	Method string
	// Tool is the tool a tools/call names (gen_ai.tool.name): the
	// model-visible name served, or the upstream's own name upstream.
	Tool string
	// Prompt is the prompt a prompts/get names (gen_ai.prompt.name).
	Prompt string
	// RequestID is the JSON-RPC id as text; empty for a notification.
	RequestID string
	// Protocol is the MCP revision (mcp.protocol.version), e.g. "2025-11-25".
	Protocol string
	// SessionID is the MCP session (mcp.session.id), empty without one.
	SessionID string
	// Subject is the authenticated caller; recorded as enduser.id on server
	// spans only with Config.RecordSubject, never on metrics.
	Subject string
	// Server is the configured server the request is routed to.
	Server string
	// Transport is network.transport; empty: TransportTCP for a request the
	// gateway serves, none upstream. Set TransportPipe for a stdio upstream.
	Transport string
	// ServerAddress and ServerPort locate an HTTP upstream (server.address,
	// server.port), for StartUpstream.
	ServerAddress string
	ServerPort    int
	// Meta is the request's params._meta; only its W3C trace context
	// (traceparent, tracestate) is read.
	Meta map[string]any
}

// Outcome is how a request ended. The zero Outcome is a success.
type Outcome struct {
	// ToolError: a tools/call whose result has isError (error.type tool_error).
	ToolError bool
	// Code is the JSON-RPC error code of an error response
	// (rpc.response.status_code, and error.type when nothing more specific).
	Code int
	// Err is a failure without a response (transport, timeout, cancellation);
	// only its class is recorded, never its message.
	Err error
	// ErrorType overrides the error.type derived from the fields above (a
	// low-cardinality class the gateway names, e.g. "denied", "rate_limited").
	ErrorType string
}

// errorType is the error.type of o, "" for a success: ErrorType, else
// tool_error, else the JSON-RPC code, else the class of Err.
func (o Outcome) errorType() string {
	switch {
	case o.ErrorType != "":
		return clip(o.ErrorType)
	case o.ToolError:
		return ErrorTypeToolError
	case o.Code != 0:
		return strconv.Itoa(o.Code)
	case o.Err != nil:
		return errClass(o.Err)
	}
	return ""
}

// errClass names an error's class: timeout and cancelled for the context's
// errors, else the Go type of the first error in the chain that is not a
// plain message or wrapper, else _OTHER.
func errClass(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch name := fmt.Sprintf("%T", e); name {
		case "*errors.errorString", "*fmt.wrapError", "*fmt.wrapErrors", "*errors.joinError":
		default:
			return name
		}
	}
	return "_OTHER"
}

// metaCarrier reads the W3C trace context out of params._meta.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(string, string) {}

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// Start begins the span and timing of one MCP request the gateway serves. The
// span's parent is the trace context in r.Meta when there is one (the
// transport's span in ctx, if any, then becomes a link), else the span in
// ctx. The returned context carries the span (pass it to StartUpstream);
// call the returned function exactly once, when the result or error is sent.
func (t *Telemetry) Start(ctx context.Context, r Request) (context.Context, func(Outcome)) {
	start := time.Now()
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start)}
	if len(r.Meta) > 0 {
		ambient := trace.SpanContextFromContext(ctx)
		remote := t.propagator.Extract(ctx, metaCarrier(r.Meta))
		if sc := trace.SpanContextFromContext(remote); sc.IsValid() && !sc.Equal(ambient) {
			if ambient.IsValid() {
				opts = append(opts, trace.WithLinks(trace.Link{SpanContext: ambient}))
			}
			ctx = remote
		}
	}
	if r.Transport == "" {
		r.Transport = TransportTCP
	}
	p := t.acquire()
	ctx, span := p.tracer.Start(ctx, spanName(r), opts...)
	if span.IsRecording() {
		span.SetAttributes(spanAttrs(r, p.recordSubject)...)
	}
	return ctx, func(o Outcome) {
		t.finish(ctx, span, p.serverOp, r, start, o)
		p.release()
	}
}

// StartUpstream begins the client-side span and timing of a call the gateway
// makes to an upstream server, as a child of the span in ctx (the one Start
// returned). It returns the context carrying the new span, the trace context
// to put into that request's params._meta (traceparent, and tracestate when
// there is one), and the function to call exactly once when the upstream's
// response or error arrives. Without spans (no OTLP endpoint) the carrier
// still passes on the trace context a client sent.
func (t *Telemetry) StartUpstream(ctx context.Context, r Request) (context.Context, map[string]string, func(Outcome)) {
	start := time.Now()
	p := t.acquire()
	ctx, span := p.tracer.Start(ctx, spanName(r), trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start))
	if span.IsRecording() {
		span.SetAttributes(spanAttrs(r, false)...)
	}
	carrier := propagation.MapCarrier{}
	t.propagator.Inject(ctx, carrier)
	return ctx, carrier, func(o Outcome) {
		t.finish(ctx, span, p.clientOp, r, start, o)
		p.release()
	}
}

// finish ends span and records the duration on h.
func (t *Telemetry) finish(ctx context.Context, span trace.Span, h metric.Float64Histogram, r Request, start time.Time, o Outcome) {
	end := time.Now()
	errType := o.errorType()
	if span.IsRecording() {
		if errType != "" {
			span.SetAttributes(keyErrorType.String(errType))
			span.SetStatus(codes.Error, errType)
		}
		if o.Code != 0 {
			span.SetAttributes(keyRPCStatus.String(strconv.Itoa(o.Code)))
		}
	}
	span.End(trace.WithTimestamp(end))
	if h.Enabled(ctx) {
		h.Record(ctx, end.Sub(start).Seconds(), metric.WithAttributeSet(t.sets.get(r, o, errType)))
	}
}

// spanName is `{mcp.method.name} {target}`, the target being the tool or
// prompt when there is one.
func spanName(r Request) string {
	method := clip(r.Method)
	switch {
	case r.Tool != "":
		return method + " " + clip(r.Tool)
	case r.Prompt != "":
		return method + " " + clip(r.Prompt)
	}
	return method
}

// spanAttrs are a span's attributes at its start; subject puts the caller's
// subject on it (a span of a request the gateway serves, with
// Config.RecordSubject).
func spanAttrs(r Request, subject bool) []attribute.KeyValue {
	a := make([]attribute.KeyValue, 0, 12)
	a = append(a, keyMethod.String(clip(r.Method)))
	a = appendTarget(a, r)
	if r.RequestID != "" {
		a = append(a, keyRequestID.String(clip(r.RequestID)))
	}
	if r.SessionID != "" {
		a = append(a, keySession.String(clip(r.SessionID)))
	}
	if r.Server != "" {
		a = append(a, keyUpstream.String(clip(r.Server)))
	}
	a = appendConnection(a, r)
	if subject && r.Subject != "" {
		a = append(a, keyEnduser.String(clip(r.Subject)))
	}
	return a
}

// setKey is what a duration measurement's attributes are made of.
type setKey struct {
	method, tool, prompt, server, protocol, transport, address, errType string
	port, code                                                          int
}

// attrSets keeps the attribute set of each distinct measurement, so that a
// request does not build and sort one: at most cardinalityLimit of them,
// past which (names a client made up) a set is built per request.
type attrSets struct {
	m sync.Map // setKey → attribute.Set
	n atomic.Int64
}

func (c *attrSets) get(r Request, o Outcome, errType string) attribute.Set {
	k := setKey{
		method: r.Method, tool: r.Tool, prompt: r.Prompt, server: r.Server, protocol: r.Protocol,
		transport: r.Transport, address: r.ServerAddress, errType: errType, port: r.ServerPort, code: o.Code,
	}
	if v, ok := c.m.Load(k); ok {
		return v.(attribute.Set)
	}
	set := attribute.NewSet(metricAttrs(r, o, errType)...)
	if c.n.Load() < cardinalityLimit {
		if _, loaded := c.m.LoadOrStore(k, set); !loaded {
			c.n.Add(1)
		}
	}
	return set
}

// metricAttrs are a duration measurement's attributes: those the conventions
// list for the operation histograms, all of low cardinality (no session or
// request id, no subject).
func metricAttrs(r Request, o Outcome, errType string) []attribute.KeyValue {
	a := make([]attribute.KeyValue, 0, 10)
	a = append(a, keyMethod.String(clip(r.Method)))
	a = appendTarget(a, r)
	if r.Server != "" {
		a = append(a, keyUpstream.String(clip(r.Server)))
	}
	a = appendConnection(a, r)
	if errType != "" {
		a = append(a, keyErrorType.String(errType))
	}
	if o.Code != 0 {
		a = append(a, keyRPCStatus.String(strconv.Itoa(o.Code)))
	}
	return a
}

// appendTarget adds the tool or prompt and, for tools/call, the GenAI
// operation.
func appendTarget(a []attribute.KeyValue, r Request) []attribute.KeyValue {
	if r.Tool != "" {
		a = append(a, keyToolName.String(clip(r.Tool)))
	}
	if r.Prompt != "" {
		a = append(a, keyPromptName.String(clip(r.Prompt)))
	}
	if r.Method == MethodToolsCall {
		a = append(a, keyOperation.String("execute_tool"))
	}
	return a
}

// appendConnection adds the protocol revision and the transport.
func appendConnection(a []attribute.KeyValue, r Request) []attribute.KeyValue {
	if r.Protocol != "" {
		a = append(a, keyProtocol.String(clip(r.Protocol)))
	}
	if r.Transport != "" {
		a = append(a, keyNetTransport.String(clip(r.Transport)))
		if r.Transport == TransportTCP {
			a = append(a, keyNetProtocolName.String("http"))
		}
	}
	if r.ServerAddress != "" {
		a = append(a, keyServerAddress.String(clip(r.ServerAddress)))
		if r.ServerPort > 0 {
			a = append(a, keyServerPort.Int(r.ServerPort))
		}
	}
	return a
}

// clip bounds s to maxValueLen bytes on a rune boundary.
func clip(s string) string {
	if len(s) <= maxValueLen {
		return s
	}
	cut := maxValueLen
	for i := cut; i > maxValueLen-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			cut = i
			break
		}
	}
	return s[:cut]
}
