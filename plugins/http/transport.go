package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/mcpgo"
	"github.com/hermes-agent/hermes/sdk/transport"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// httpTransport is one server's connection: mcp-go's Streamable HTTP or SSE
// client transport, with the HTTP client, headers, error classification and
// logging the host needs around it. It is an mcp-go transport; mcpgo.Adapt
// makes it a plugin connection. It never replays or answers a message of
// the protocol on its own: when the server forgets the session, requests
// fail with sdk.CodeSessionExpired and the host starts a new one.
type httpTransport struct {
	cfg      transport.Config
	host     transport.Host
	log      hclog.Logger
	client   *http.Client
	sse      bool
	shownURL string // cfg.URL without query or user info, for messages

	inner mcptransport.Interface

	hmu    sync.RWMutex
	onNote func(mcp.JSONRPCNotification)
	onReq  mcptransport.RequestHandler

	// version is the negotiated protocol version ("" before), which the
	// answers to an SSE server's requests carry.
	version atomic.Pointer[string]
	closed  atomic.Bool

	// done is closed when the connection ended on its own (an SSE stream
	// was lost); err says why.
	done     chan struct{}
	doneOnce sync.Once
	err      error

	// streamAnswered is closed when the Streamable HTTP GET stream got its
	// first answer; nil for SSE.
	streamAnswered *gate
}

var (
	_ mcptransport.BidirectionalInterface = (*httpTransport)(nil)
	_ mcptransport.HTTPConnection         = (*httpTransport)(nil)
	_ mcpgo.Watched                       = (*httpTransport)(nil)
)

// newTransport checks the server entry and builds its transport; nothing
// connects before Start.
func newTransport(cfg transport.Config, host transport.Host, log hclog.Logger) (*httpTransport, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, sdk.NewError(sdk.CodeConfig, "url of server %q is not an http(s) URL; fix url in config.yaml (e.g. https://host/mcp)", cfg.Server)
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	shown := *u
	shown.User = nil
	shown.RawQuery = ""
	shown.Fragment = ""
	t := &httpTransport{
		cfg:      cfg,
		host:     host,
		log:      log,
		sse:      strings.EqualFold(cfg.Transport, "sse"),
		shownURL: shown.String(),
		done:     make(chan struct{}),
	}
	client, rt, err := newHTTPClient(cfg, u, host)
	if err != nil {
		return nil, err
	}
	rt.limit.onStream = func(e *sdk.Error) {
		t.log.Warn("event stream over the message limit; ending the connection", "url", t.shownURL)
		t.finish(e)
	}
	t.client = client
	if t.sse {
		err = t.newSSE()
	} else {
		t.streamAnswered = newGate()
		rt.onStream = t.streamAnswered.open
		err = t.newStreamable()
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// headers returns a copy of the configured headers.
func (t *httpTransport) headers() map[string]string {
	h := make(map[string]string, len(t.cfg.Headers))
	for k, v := range t.cfg.Headers {
		h[k] = v
	}
	return h
}

// newStreamable builds the mcp-go Streamable HTTP transport.
func (t *httpTransport) newStreamable() error {
	s, err := mcptransport.NewStreamableHTTP(t.cfg.URL,
		mcptransport.WithHTTPBasicClient(t.client),
		mcptransport.WithHTTPHeaders(t.headers()),
		mcptransport.WithHTTPLogger(newSlogger(t.log, t.scrub)),
		// The GET stream carries the server's own requests (sampling,
		// roots, elicitation) and notifications outside a call.
		mcptransport.WithContinuousListening(),
	)
	if err != nil {
		return sdk.NewError(sdk.CodeConfig, "url of server %q: %v", t.cfg.Server, err)
	}
	s.SetNotificationHandler(t.dispatchNotification)
	s.SetRequestHandler(t.dispatchRequest)
	t.inner = s
	return nil
}

// newSSE builds the mcp-go legacy SSE transport, with a tap on its event
// stream for the server's requests.
func (t *httpTransport) newSSE() error {
	tap := &sseTap{base: t.client.Transport, t: t}
	tapped := *t.client
	tapped.Transport = tap
	opts := []mcptransport.ClientOption{
		mcptransport.WithHTTPClient(&tapped),
		mcptransport.WithHeaders(t.headers()),
		mcptransport.WithSSELogger(newSlogger(t.log, t.scrub)),
		// Without a timeout of the host's, the transport's own bound must
		// not cut a long call short.
		mcptransport.WithResponseTimeout(orUnbounded(t.cfg.Timeout)),
	}
	if t.cfg.ConnectTimeout > 0 {
		opts = append(opts, mcptransport.WithEndpointTimeout(t.cfg.ConnectTimeout))
	}
	s, err := mcptransport.NewSSE(t.cfg.URL, opts...)
	if err != nil {
		return sdk.NewError(sdk.CodeConfig, "url of server %q: %v", t.cfg.Server, err)
	}
	tap.sse.Store(s)
	s.SetNotificationHandler(t.dispatchNotification)
	s.SetConnectionLostHandler(t.streamLost)
	t.inner = s
	return nil
}

// unbounded stands for "no timeout" where mcp-go wants a duration.
const unbounded = time.Duration(1<<63 - 1)

func orUnbounded(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return unbounded
}

// bound returns ctx limited to d, or ctx itself when d is not positive.
func bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}

func (t *httpTransport) kind() string {
	if t.sse {
		return "sse"
	}
	return "http"
}

// Start connects: the SSE transport opens its event stream and waits for
// the endpoint; Streamable HTTP connects with its first request. ctx lives
// as long as the connection.
func (t *httpTransport) Start(ctx context.Context) error {
	sctx, info := withInfo(ctx)
	if err := t.inner.Start(sctx); err != nil {
		_ = t.inner.Close()
		return t.classify(err, info, "connect")
	}
	t.log.Debug("connected", "transport", t.kind(), "url", t.shownURL)
	return nil
}

// SendRequest sends one request, bounded by timeout (connect_timeout for
// initialize, which belongs to connecting).
func (t *httpTransport) SendRequest(ctx context.Context, req mcptransport.JSONRPCRequest) (*mcptransport.JSONRPCResponse, error) {
	limit, key := t.cfg.Timeout, "timeout"
	isInit := req.Method == string(mcp.MethodInitialize)
	switch {
	case isInit || req.Method == string(mcp.MethodServerDiscover):
		limit, key = t.cfg.ConnectTimeout, "connect_timeout"
	case req.Method == string(mcp.MethodSubscriptionsListen):
		// The stream of the server's notifications (2026-07-28) lasts as
		// long as the host wants it, like the GET stream before it.
		limit = 0
	}
	bctx, cancel := bound(ctx, limit)
	defer cancel()
	bctx, info := withInfo(bctx)
	resp, err := t.inner.SendRequest(bctx, req)
	if err != nil {
		if bctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			return nil, t.timeoutError(req.Method, limit, key)
		}
		if refusal := jsonRPCRefusal(err, info, req.ID); refusal != nil {
			return refusal, nil
		}
		return nil, t.classify(err, info, req.Method)
	}
	if status, challenge, _ := info.get(); status == http.StatusUnauthorized || status == http.StatusForbidden {
		// A refusal with a JSON-RPC body comes back as a response.
		if e := info.hostAuthError(); e != nil {
			return nil, e
		}
		return nil, t.authError(status, challenge)
	}
	if isInit && resp.Error == nil {
		t.initialized(bctx)
	}
	return resp, nil
}

// jsonRPCRefusal returns the JSON-RPC error a server sent as the body of an
// HTTP 4xx refusal of an initialize (as current servers do when they do not
// speak the requested revision), as the response to request id; nil when
// the refusal carried none. The host then sees why, and negotiates.
func jsonRPCRefusal(err error, info *respInfo, id mcp.RequestId) *mcptransport.JSONRPCResponse {
	if !errors.Is(err, mcptransport.ErrLegacySSEServer) {
		return nil
	}
	body := info.errorBodyBytes()
	if len(body) == 0 {
		return nil
	}
	var r struct {
		Error *mcp.JSONRPCErrorDetails `json:"error"`
	}
	if json.Unmarshal(body, &r) != nil || r.Error == nil {
		return nil
	}
	return &mcptransport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Error: r.Error}
}

// SendNotification sends one notification, bounded by timeout.
func (t *httpTransport) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	bctx, cancel := bound(ctx, t.cfg.Timeout)
	defer cancel()
	bctx, info := withInfo(bctx)
	err := t.inner.SendNotification(bctx, n)
	if err != nil && bctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		return t.timeoutError(n.Method, t.cfg.Timeout, "timeout")
	}
	return t.classify(err, info, n.Method)
}

// SetNotificationHandler sets the handler of the server's notifications.
func (t *httpTransport) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	t.hmu.Lock()
	t.onNote = h
	t.hmu.Unlock()
}

// SetRequestHandler sets the handler of the server's own requests.
func (t *httpTransport) SetRequestHandler(h mcptransport.RequestHandler) {
	t.hmu.Lock()
	t.onReq = h
	t.hmu.Unlock()
}

func (t *httpTransport) dispatchNotification(n mcp.JSONRPCNotification) {
	t.hmu.RLock()
	h := t.onNote
	t.hmu.RUnlock()
	if h != nil {
		h(n)
	}
}

func (t *httpTransport) dispatchRequest(ctx context.Context, req mcptransport.JSONRPCRequest) (*mcptransport.JSONRPCResponse, error) {
	t.hmu.RLock()
	h := t.onReq
	t.hmu.RUnlock()
	if h == nil {
		return mcptransport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, "client does not handle "+req.Method, nil), nil
	}
	return h(ctx, req)
}

// SetProtocolVersion passes the negotiated version on; requests carry it as
// a header (transport.HTTPConnection).
func (t *httpTransport) SetProtocolVersion(version string) {
	t.version.Store(&version)
	if hc, ok := t.inner.(mcptransport.HTTPConnection); ok {
		hc.SetProtocolVersion(version)
	}
}

// protocolVersion returns the negotiated version, or "".
func (t *httpTransport) protocolVersion() string {
	if v := t.version.Load(); v != nil {
		return *v
	}
	return ""
}

// RequiresLegacyProtocol is true for the legacy SSE transport, which exists
// only before 2026-07-28. Streamable HTTP speaks every revision: the GET
// stream that carries a legacy server's requests opens only once a legacy
// revision was negotiated.
func (t *httpTransport) RequiresLegacyProtocol() bool { return t.sse }

// GetSessionId returns the session id ("" for SSE, and after the server
// forgot the session).
func (t *httpTransport) GetSessionId() string { return t.inner.GetSessionId() }

// Close ends the session (DELETE for Streamable HTTP) and every stream.
func (t *httpTransport) Close() error {
	t.closed.Store(true)
	return t.inner.Close()
}

// warn logs w and tells the host.
func (t *httpTransport) warn(w *sdk.Error) {
	t.log.Warn(w.Message)
	if t.host != nil {
		t.host.Warn(w)
	}
}
