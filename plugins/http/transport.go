package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// HTTP header names of the MCP transports.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-ID"
)

// firstStatelessRevision is the first MCP revision without the GET stream
// and sessions (2026-07-28). Revision names are dates, so they compare as
// strings.
const firstStatelessRevision = "2026-07-28"

// inbox is how many of the server's messages wait for the host before the
// streams that bring them are held back.
const inbox = 64

// httpTransport is one server's connection: Streamable HTTP (each message
// a POST, answered with JSON or an event stream, plus the GET stream the
// host asks for) or the legacy HTTP+SSE transport (an event stream and an
// endpoint to POST to). It moves messages as bytes: it peeks at a message
// only for what the HTTP wire needs (is it a request, its id, initialize
// starts a session), and never replays or answers a message of the
// protocol on its own. When the server forgets the session, writes fail
// with sdk.CodeSessionExpired and the host starts a new one.
type httpTransport struct {
	cfg      transport.Config
	host     transport.Host
	log      hclog.Logger
	client   *http.Client
	sse      bool
	shownURL string // cfg.URL without query or user info, for messages
	max      int64  // the largest message accepted

	// ctx lives as long as the connection; cancel ends every stream.
	ctx    context.Context
	cancel context.CancelFunc

	in chan []byte // the server's messages, for Read

	session atomic.Pointer[string]
	// sessionEnded is set when the server answered 404 to the session:
	// until an initialize starts a new one, messages fail with
	// CodeSessionExpired without going out (without a session id the
	// server would refuse them, or take them as another session's).
	sessionEnded atomic.Bool
	// version is the protocol version the host negotiated ("" before).
	version atomic.Pointer[string]

	// listen is the GET stream of Streamable HTTP (the host asked for it
	// by setting a revision that has one).
	listenOnce  sync.Once
	listening   atomic.Bool
	listenReady chan struct{} // closed once the GET stream was answered
	readyOnce   sync.Once

	// legacy is the state of the legacy SSE transport; nil otherwise.
	legacy *legacySSE

	// done is closed when the connection ended (Close, or a stream the
	// connection cannot live without was lost); err says why.
	done      chan struct{}
	doneOnce  sync.Once
	err       error
	closeOnce sync.Once
}

var (
	_ transport.Conn          = (*httpTransport)(nil)
	_ transport.Concurrent    = (*httpTransport)(nil)
	_ transport.Describer     = (*httpTransport)(nil)
	_ transport.VersionSetter = (*httpTransport)(nil)
)

// newTransport checks the server entry and builds its transport; nothing
// connects before open.
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
	max := int64(cfg.MaxMessageBytes)
	if max <= 0 {
		max = transport.DefaultMaxMessageBytes
	}
	t := &httpTransport{
		cfg:         cfg,
		host:        host,
		log:         log,
		sse:         strings.EqualFold(cfg.Transport, "sse"),
		shownURL:    shown.String(),
		max:         max,
		in:          make(chan []byte, inbox),
		listenReady: make(chan struct{}),
		done:        make(chan struct{}),
	}
	empty := ""
	t.session.Store(&empty)
	t.version.Store(&empty)
	t.ctx, t.cancel = context.WithCancel(context.Background())
	client, err := newHTTPClient(cfg, u, host)
	if err != nil {
		return nil, err
	}
	t.client = client
	return t, nil
}

// open connects: the legacy SSE transport opens its event stream and waits
// for the endpoint; Streamable HTTP connects with the host's first message.
func (t *httpTransport) open(ctx context.Context) error {
	if t.sse {
		return t.openLegacy(ctx)
	}
	return nil
}

// Read returns the server's next message.
func (t *httpTransport) Read(ctx context.Context) ([]byte, error) {
	select {
	case m := <-t.in:
		return m, nil
	case <-t.done:
		select {
		case m := <-t.in:
			return m, nil
		default:
		}
		return nil, t.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliver hands one of the server's messages to the host; it waits while
// the host has many unread, so that a flood holds the stream back instead
// of growing the plugin.
func (t *httpTransport) deliver(msg []byte) {
	select {
	case t.in <- msg:
	case <-t.ctx.Done():
	}
}

// Write sends one message: a POST (Streamable HTTP: its answer, JSON or an
// event stream, is read here; legacy SSE: the answer comes on the event
// stream). It returns when the exchange is over.
func (t *httpTransport) Write(ctx context.Context, msg []byte) error {
	p := peek(msg)
	if t.sse {
		return t.postLegacy(ctx, msg, p)
	}
	t.waitListen(ctx)
	return t.post(ctx, msg, p)
}

// ConcurrentWrites says each message is its own exchange.
func (t *httpTransport) ConcurrentWrites() bool { return true }

// Properties: MCP over HTTP; the legacy SSE transport exists only before
// 2026-07-28.
func (t *httpTransport) Properties() transport.Properties {
	return transport.Properties{HTTP: true, LegacyOnly: t.sse}
}

// SetProtocolVersion records the revision the host negotiated (exchanges
// that are not the host's messages, such as the GET stream, carry it), and
// opens the GET stream of Streamable HTTP when the revision has one: every
// revision before 2026-07-28, however it was reached (pinned, remembered,
// or negotiated after a failed server/discover). The messages themselves
// carry the header the host attached to them.
func (t *httpTransport) SetProtocolVersion(version string) {
	t.version.Store(&version)
	if t.sse || version == "" || version >= firstStatelessRevision {
		return
	}
	t.listenOnce.Do(func() {
		t.listening.Store(true)
		go t.listen()
	})
}

// protocolVersion returns the negotiated version, or "".
func (t *httpTransport) protocolVersion() string { return *t.version.Load() }

// SessionID returns the Streamable HTTP session id, or "".
func (t *httpTransport) SessionID() string { return *t.session.Load() }

func (t *httpTransport) setSession(id string) { t.session.Store(&id) }

// endSession forgets the session sent, which the server no longer knows,
// unless another one has replaced it meanwhile.
func (t *httpTransport) endSession(sent string) {
	cur := t.session.Load()
	empty := ""
	if *cur == sent && t.session.CompareAndSwap(cur, &empty) {
		t.sessionEnded.Store(true)
	}
}

// Close ends the session (a DELETE, for Streamable HTTP with a session) and
// every stream.
func (t *httpTransport) Close() error {
	t.closeOnce.Do(func() {
		if id := t.SessionID(); id != "" && !t.sse {
			t.deleteSession(id)
		}
		t.finish(sdk.NewError(sdk.CodeClosed, "connection to MCP server '%s' closed", t.cfg.Server))
	})
	return nil
}

// deleteSession tells the server the session is over, within a few
// seconds.
func (t *httpTransport) deleteSession(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := t.newRequest(ctx, http.MethodDelete, t.cfg.URL, nil, nil)
	if err != nil {
		return
	}
	req.Header.Set(headerSessionID, id)
	resp, err := t.client.Do(req)
	if err != nil {
		t.log.Debug("DELETE of the session failed", "error", t.scrub(err.Error()))
		return
	}
	_ = resp.Body.Close()
}

// finish ends the connection once, with err.
func (t *httpTransport) finish(err *sdk.Error) {
	t.doneOnce.Do(func() {
		t.err = err
		close(t.done)
		t.cancel()
	})
}

// newRequest builds a request with the configured headers, the message's
// headers from the host (which win), and the negotiated version when the
// host attached none.
func (t *httpTransport) newRequest(ctx context.Context, method, target string, body []byte, msgHeader http.Header) (*http.Request, error) {
	var req *http.Request
	var err error
	if body != nil {
		req, err = http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	} else {
		req, err = http.NewRequestWithContext(ctx, method, target, nil)
	}
	if err != nil {
		return nil, sdk.NewError(sdk.CodeConfig, "url of server %q: %v", t.cfg.Server, err)
	}
	if body != nil {
		// GetBody lets a challenge resend the body.
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	for k, v := range t.cfg.Headers {
		req.Header.Set(k, v)
	}
	for k, vs := range msgHeader {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	if req.Header.Get(headerProtocolVersion) == "" {
		if v := t.protocolVersion(); v != "" {
			req.Header.Set(headerProtocolVersion, v)
		}
	}
	return req, nil
}

// warn logs w and tells the host.
func (t *httpTransport) warn(w *sdk.Error) {
	t.log.Warn(w.Message)
	if t.host != nil {
		t.host.Warn(w)
	}
}

// bound returns ctx limited to d, or ctx itself when d is not positive.
func bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}

// limitOf returns the bound of a message's exchange and its config key:
// connect_timeout for the messages that connect (initialize,
// server/discover), none for the stream of notifications the host keeps
// open (subscriptions/listen), timeout for the rest.
func (t *httpTransport) limitOf(p peeked) (time.Duration, string) {
	switch p.method {
	case "initialize", "server/discover":
		return t.cfg.ConnectTimeout, "connect_timeout"
	case "subscriptions/listen":
		return 0, ""
	}
	return t.cfg.Timeout, "timeout"
}

// what names a message in errors: its method, or "the answer".
func what(p peeked) string {
	if p.method != "" {
		return p.method
	}
	return "an answer"
}
