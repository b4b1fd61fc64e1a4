package main

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
	"github.com/hermes-agent/hermes/sdk"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Defaults when the host sends no timeouts.
const (
	defaultConnectTimeout = 60 * time.Second
	defaultCallTimeout    = 300 * time.Second
)

// httpTransport is one server's connection: an mcp-go Streamable HTTP or SSE
// transport, replaced by a fresh one when the server forgets the session.
type httpTransport struct {
	cfg      sdk.TransportConfig
	log      hclog.Logger
	client   *http.Client
	sse      bool
	shownURL string // cfg.URL without query or user info, for messages

	sdk.Handlers

	mu       sync.Mutex
	inner    transport.Interface
	startCtx context.Context
	version  string
	initReq  *transport.JSONRPCRequest
	initNote *mcp.JSONRPCNotification
	closed   bool

	// reinitMu makes one re-initialisation at a time; callers that failed
	// on the same old transport then share its result.
	reinitMu sync.Mutex

	done     chan struct{}
	doneOnce sync.Once
	err      error

	// streamAnswered is closed when the current Streamable HTTP transport's
	// GET stream got its first answer; replaced with each transport.
	streamAnswered atomic.Pointer[gate]
}

// gate is a channel closed once.
type gate struct {
	ch   chan struct{}
	once sync.Once
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// streamWait bounds how long notifications/initialized waits for the GET
// stream to be answered.
const streamWait = 2 * time.Second

var (
	_ transport.BidirectionalInterface = (*httpTransport)(nil)
	_ transport.HTTPConnection         = (*httpTransport)(nil)
	_ sdk.Watched                      = (*httpTransport)(nil)
)

// newTransport checks the server entry and builds its transport; nothing
// connects before Start.
func newTransport(cfg sdk.TransportConfig, host sdk.Host, log hclog.Logger) (*httpTransport, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, sdk.NewError(sdk.CodeConfig, "url of server %q is not an http(s) URL; fix url in config.yaml (e.g. https://host/mcp)", cfg.Server)
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = defaultConnectTimeout
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaultCallTimeout
	}
	client, err := newHTTPClient(cfg, u, host)
	if err != nil {
		return nil, err
	}
	shown := *u
	shown.User = nil
	shown.RawQuery = ""
	shown.Fragment = ""
	t := &httpTransport{
		cfg:      cfg,
		log:      log,
		client:   client,
		sse:      strings.EqualFold(cfg.Transport, "sse"),
		shownURL: shown.String(),
		done:     make(chan struct{}),
	}
	client.Transport.(*roundTripper).onStream = t.streamAnsweredNow
	return t, nil
}

// streamAnsweredNow records that the GET stream was answered.
func (t *httpTransport) streamAnsweredNow() {
	if g := t.streamAnswered.Load(); g != nil {
		g.open()
	}
}

// waitForStream waits, within streamWait, until the GET stream of the
// current transport has been answered. Servers send what is not tied to a
// request (list_changed, roots or sampling requests right after the
// handshake) only on that stream, and drop it while there is none; so the
// handshake is completed only once the stream is there.
func (t *httpTransport) waitForStream(ctx context.Context) {
	g := t.streamAnswered.Load()
	if g == nil {
		return
	}
	timer := time.NewTimer(streamWait)
	defer timer.Stop()
	select {
	case <-g.ch:
	case <-timer.C:
		t.log.Debug("GET stream not answered yet; completing the handshake anyway", "url", t.shownURL)
	case <-ctx.Done():
	}
}

// newInner builds a fresh mcp-go transport wired to this transport's
// handlers.
func (t *httpTransport) newInner() (transport.Interface, error) {
	headers := make(map[string]string, len(t.cfg.Headers))
	for k, v := range t.cfg.Headers {
		headers[k] = v
	}
	logger := newSlogger(t.log, t.scrub)
	if t.sse {
		tap := &sseTap{base: t.client.Transport, t: t}
		tapped := *t.client
		tapped.Transport = tap
		s, err := transport.NewSSE(t.cfg.URL,
			transport.WithHTTPClient(&tapped),
			transport.WithHeaders(headers),
			transport.WithSSELogger(logger),
			transport.WithEndpointTimeout(t.cfg.ConnectTimeout),
			transport.WithResponseTimeout(t.cfg.Timeout),
		)
		if err != nil {
			return nil, sdk.NewError(sdk.CodeConfig, "url of server %q: %v", t.cfg.Server, err)
		}
		tap.sse.Store(s)
		s.SetNotificationHandler(t.dispatchNotification)
		s.SetConnectionLostHandler(func(err error) { t.streamLost(s, err) })
		return s, nil
	}
	t.streamAnswered.Store(newGate())
	s, err := transport.NewStreamableHTTP(t.cfg.URL,
		transport.WithHTTPBasicClient(t.client),
		transport.WithHTTPHeaders(headers),
		transport.WithHTTPLogger(logger),
		// The GET stream carries the server's own requests (sampling,
		// roots, elicitation) and notifications outside a call.
		transport.WithContinuousListening(),
	)
	if err != nil {
		return nil, sdk.NewError(sdk.CodeConfig, "url of server %q: %v", t.cfg.Server, err)
	}
	s.SetNotificationHandler(t.dispatchNotification)
	s.SetRequestHandler(t.dispatchRequest)
	return s, nil
}

// Start runs the content-type preflight and connects. ctx lives as long as
// the plugin; the host bounds the start itself.
func (t *httpTransport) Start(ctx context.Context) error {
	if t.preflightWanted() {
		if err := t.preflight(ctx); err != nil {
			return err
		}
	}
	inner, err := t.newInner()
	if err != nil {
		return err
	}
	sctx, info := withInfo(ctx)
	if err := inner.Start(sctx); err != nil {
		_ = inner.Close()
		return t.classify(err, info, "connect")
	}
	t.mu.Lock()
	t.inner, t.startCtx = inner, ctx
	t.mu.Unlock()
	t.log.Debug("connected", "transport", t.kind(), "url", t.shownURL)
	return nil
}

func (t *httpTransport) kind() string {
	if t.sse {
		return "sse"
	}
	return "http"
}

func (t *httpTransport) current() transport.Interface {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.inner
}

// SendRequest sends one request, bounded by timeout (connect_timeout for
// initialize). When the server has forgotten the session it re-initialises
// with the host's own initialize request and retries once.
func (t *httpTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	inner := t.current()
	if inner == nil {
		return nil, sdk.NewError(sdk.CodeClosed, "transport of server %q is not started", t.cfg.Server)
	}
	isInit := req.Method == string(mcp.MethodInitialize)
	timeout := t.cfg.Timeout
	if isInit {
		timeout = t.cfg.ConnectTimeout
		r := req
		t.mu.Lock()
		t.initReq = &r
		t.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	resp, info, err := t.send(ctx, inner, req)
	if !isInit && t.expired(inner, resp, err) {
		fresh, rerr := t.reinit(ctx, inner)
		if rerr != nil {
			return nil, t.expiredError(rerr)
		}
		resp, info, err = t.send(ctx, fresh, req)
	}
	if err != nil {
		return nil, t.classify(err, info, req.Method)
	}
	if status, challenge, _ := info.get(); status == 401 || status == 403 {
		// A refusal with a JSON-RPC body comes back as a response.
		return nil, t.authError(status, challenge)
	}
	return resp, nil
}

func (t *httpTransport) send(ctx context.Context, inner transport.Interface, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, *respInfo, error) {
	ctx, info := withInfo(ctx)
	resp, err := inner.SendRequest(ctx, req)
	return resp, info, err
}

// expired reports whether a request failed because the server no longer
// knows the session, so that a re-initialisation may help.
func (t *httpTransport) expired(inner transport.Interface, resp *transport.JSONRPCResponse, err error) bool {
	t.mu.Lock()
	can := t.initReq != nil && !t.closed
	t.mu.Unlock()
	if !can {
		return false
	}
	if err != nil {
		return sessionGone(err)
	}
	return resp != nil && resp.Error != nil && inner.GetSessionId() != "" && hasMarker(resp.Error.Message, sessionMarkers)
}

func (t *httpTransport) expiredError(err error) error {
	var se *sdk.Error
	if errors.As(err, &se) && se.Code != sdk.CodeOther && se.Code != sdk.CodeSessionExpired {
		// The server is gone or refuses us: say that, not "expired".
		return se
	}
	return sdk.NewError(sdk.CodeSessionExpired, "MCP server '%s' no longer knows the session and re-initialising failed (%s); reconnect to start a new one", t.cfg.Server, t.scrub(err.Error()))
}

// reinit replaces old with a fresh transport on which the host's last
// initialize request and notifications/initialized have been replayed. If
// another caller already replaced old, it returns the current transport.
func (t *httpTransport) reinit(ctx context.Context, old transport.Interface) (transport.Interface, error) {
	t.reinitMu.Lock()
	defer t.reinitMu.Unlock()
	t.mu.Lock()
	cur, initReq, note, version, startCtx, closed := t.inner, *t.initReq, t.initNote, t.version, t.startCtx, t.closed
	t.mu.Unlock()
	if closed {
		return nil, sdk.NewError(sdk.CodeClosed, "transport of server %q is closed", t.cfg.Server)
	}
	if cur != old {
		return cur, nil
	}
	t.log.Info("session expired, re-initialising", "url", t.shownURL)
	fresh, err := t.newInner()
	if err != nil {
		return nil, err
	}
	sctx, info := withInfo(startCtx)
	if err := fresh.Start(sctx); err != nil {
		_ = fresh.Close()
		return nil, t.classify(err, info, "connect")
	}
	ictx, cancel := context.WithTimeout(ctx, t.cfg.ConnectTimeout)
	defer cancel()
	resp, info, err := t.send(ictx, fresh, initReq)
	if err == nil && resp != nil && resp.Error != nil {
		err = fmt.Errorf("initialize: %s", resp.Error.Message)
	}
	if err != nil {
		_ = fresh.Close()
		return nil, t.classify(err, info, "initialize")
	}
	if hc, ok := fresh.(transport.HTTPConnection); ok && version != "" {
		hc.SetProtocolVersion(version)
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{Method: "notifications/initialized"}}
	if note != nil {
		n = *note
	}
	t.waitForStream(ictx)
	nctx, ninfo := withInfo(ictx)
	if err := fresh.SendNotification(nctx, n); err != nil {
		_ = fresh.Close()
		return nil, t.classify(err, ninfo, n.Method)
	}
	t.mu.Lock()
	t.inner = fresh
	t.mu.Unlock()
	go func() { _ = old.Close() }()
	t.log.Info("session re-initialised", "url", t.shownURL)
	return fresh, nil
}

// SendNotification sends one notification; like SendRequest it survives an
// expired session once.
func (t *httpTransport) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	inner := t.current()
	if inner == nil {
		return sdk.NewError(sdk.CodeClosed, "transport of server %q is not started", t.cfg.Server)
	}
	isInitialized := n.Method == "notifications/initialized"
	if isInitialized {
		nn := n
		t.mu.Lock()
		t.initNote = &nn
		t.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	if isInitialized {
		t.waitForStream(ctx)
	}
	nctx, info := withInfo(ctx)
	err := inner.SendNotification(nctx, n)
	if err != nil && !isInitialized && t.expired(inner, nil, err) {
		fresh, rerr := t.reinit(ctx, inner)
		if rerr != nil {
			return t.expiredError(rerr)
		}
		nctx, info = withInfo(ctx)
		err = fresh.SendNotification(nctx, n)
	}
	return t.classify(err, info, n.Method)
}

func (t *httpTransport) dispatchNotification(n mcp.JSONRPCNotification) {
	h := t.Notification()
	if h != nil {
		h(n)
	}
}

func (t *httpTransport) dispatchRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	h := t.Request()
	if h == nil {
		return transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, "client does not handle "+req.Method, nil), nil
	}
	return h(ctx, req)
}

// SetProtocolVersion records the negotiated version for this and every
// later transport (transport.HTTPConnection).
func (t *httpTransport) SetProtocolVersion(version string) {
	t.mu.Lock()
	t.version = version
	inner := t.inner
	t.mu.Unlock()
	if hc, ok := inner.(transport.HTTPConnection); ok {
		hc.SetProtocolVersion(version)
	}
}

// RequiresLegacyProtocol is true: the GET stream that carries the server's
// requests and the legacy SSE transport exist only before 2026-07-28.
func (t *httpTransport) RequiresLegacyProtocol() bool { return true }

// GetSessionId returns the current session id ("" for SSE).
func (t *httpTransport) GetSessionId() string {
	if inner := t.current(); inner != nil {
		return inner.GetSessionId()
	}
	return ""
}

// Close ends the session (DELETE for Streamable HTTP) and every stream.
func (t *httpTransport) Close() error {
	t.mu.Lock()
	t.closed = true
	inner := t.inner
	t.mu.Unlock()
	if inner != nil {
		return inner.Close()
	}
	return nil
}

// streamLost is called when an SSE transport's event stream ends. Without
// the stream no response can arrive, so the connection is over: the host
// hears it at once (sdk.Watched) and reconnects.
func (t *httpTransport) streamLost(s transport.Interface, err error) {
	t.mu.Lock()
	current := t.inner == s && !t.closed
	t.mu.Unlock()
	if !current {
		return
	}
	msg := "stream ended"
	if err != nil {
		msg = t.scrub(err.Error())
	}
	t.log.Warn("SSE stream lost", "url", t.shownURL, "error", msg)
	t.finish(sdk.NewError(sdk.CodeClosed, "the SSE stream of MCP server '%s' at %s was lost (%s); reconnecting", t.cfg.Server, t.shownURL, msg))
}

func (t *httpTransport) finish(err error) {
	t.doneOnce.Do(func() {
		t.err = err
		close(t.done)
	})
}

// Done is closed when the connection ended on its own (sdk.Watched): an SSE
// stream that broke. A Streamable HTTP connection has no such signal; its
// GET stream reconnects by itself and requests report their own failures.
func (t *httpTransport) Done() <-chan struct{} { return t.done }

// Err says why the connection ended.
func (t *httpTransport) Err() error {
	select {
	case <-t.done:
		return t.err
	default:
		return nil
	}
}
