package pluginconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/jsondepth"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/transport"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// DefaultMaxServerRequests is DialOptions.MaxServerRequests's default.
const DefaultMaxServerRequests = 64

// RefusedCode is the JSON-RPC error code of a server request refused for
// being one too many at once (-32000, implementation-defined server error).
const RefusedCode = -32000

// DialOptions configures Dial. Its transport options' message callbacks
// (OnMessage, OnWriteError) are the adapter's own and are overwritten.
type DialOptions struct {
	pluginhost.TransportOptions
	// OnUndeliverable receives a write error the host cannot hand to any
	// caller (the answer to a request of the server's own that failed to
	// send), for its log.
	OnUndeliverable func(err *sdk.Error)
	// MaxServerRequests bounds the requests of the server's own
	// (sampling, elicitation, roots) being handled at once; default
	// DefaultMaxServerRequests. One more is answered at once with a
	// JSON-RPC error (RefusedCode, "too many concurrent requests from the
	// server"), without running a handler, and the first refusal is
	// reported to OnWarning, naming RequestsLimitName.
	MaxServerRequests int
	// RequestsLimitName is the config key users set to raise
	// MaxServerRequests, for the warning; default "max_server_requests".
	RequestsLimitName string
	// RequestContext, when set, makes the context a request of the
	// server's own is handled with. It is called on the connection's
	// reader as the request arrives, before any later message is read:
	// what it records is the connection's state when the server asked
	// (say, which calls were in flight), not when a handler got to run.
	// It must return at once. nil: context.Background().
	RequestContext func() context.Context
}

// Client is the host side of a plugin connection as an mcp-go transport. It
// implements transport.Interface and transport.BidirectionalInterface; Dial
// returns an *HTTPClient (adding transport.HTTPConnection) when the plugin
// speaks MCP over HTTP.
type Client struct {
	conn   *pluginhost.TransportConn
	opts   DialOptions
	server string
	http   bool // the plugin speaks MCP over HTTP: requests carry headers

	mu      sync.Mutex
	pending map[string]*pending // by JSON-RPC id
	bySeq   map[uint64]string   // message seq → JSON-RPC id

	hmu    sync.RWMutex
	onNote func(mcp.JSONRPCNotification)
	onReq  mcptransport.RequestHandler

	// slots holds a token per server request being handled.
	slots   chan struct{}
	refused atomic.Bool // a refusal was reported

	// version is the negotiated protocol version of an HTTP connection,
	// which every request carries as its MCP-Protocol-Version header.
	version atomic.Pointer[string]
}

type pending struct {
	id  mcp.RequestId
	seq uint64
	ch  chan result
}

type result struct {
	resp *mcptransport.JSONRPCResponse
	err  error
}

// HTTPClient is a Client whose plugin speaks MCP over HTTP.
type HTTPClient struct{ *Client }

// SetProtocolVersion tells the plugin the negotiated protocol version, and
// makes it the MCP-Protocol-Version header of every request written after
// it (so that no request can go out without it, whatever the plugin does).
func (h *HTTPClient) SetProtocolVersion(version string) {
	h.version.Store(&version)
	h.conn.SetProtocolVersion(version)
}

// withVersion returns header with the negotiated version's
// MCP-Protocol-Version added, when there is one and header has none.
func (c *Client) withVersion(header http.Header) http.Header {
	v := c.version.Load()
	if v == nil || *v == "" || header.Get("Mcp-Protocol-Version") != "" {
		return header
	}
	header = header.Clone()
	if header == nil {
		header = http.Header{}
	}
	header.Set("Mcp-Protocol-Version", *v)
	return header
}

// dialConfig is cfg as Dial opens it: the bound of the server's own
// requests from opts, defaulted there.
func dialConfig(cfg transport.Config, opts *DialOptions) transport.Config {
	if opts.MaxServerRequests <= 0 {
		opts.MaxServerRequests = DefaultMaxServerRequests
	}
	cfg.MaxServerRequests = opts.MaxServerRequests
	return cfg
}

// OpenConfig is the config Dial's Open sends for cfg and opts, byte for
// byte: what a host hands a transport plugin for an early open
// (sdk.EarlyOpenFDEnv).
func OpenConfig(cfg transport.Config, opts DialOptions) ([]byte, error) {
	cfg = dialConfig(cfg, &opts)
	return pluginhost.TransportOpenConfig(cfg, opts.MaxMessageBytes)
}

// Dial opens a connection through the transport plugin h to the server cfg
// describes and returns it as an mcp-go transport (already connected: Start
// does nothing) with the underlying connection.
func Dial(ctx context.Context, h *pluginhost.Transport, cfg transport.Config, opts DialOptions) (mcptransport.Interface, *pluginhost.TransportConn, error) {
	cfg = dialConfig(cfg, &opts)
	if opts.RequestsLimitName == "" {
		opts.RequestsLimitName = "max_server_requests"
	}
	c := &Client{opts: opts, server: cfg.Server, pending: map[string]*pending{}, bySeq: map[uint64]string{},
		slots: make(chan struct{}, opts.MaxServerRequests)}
	co := opts.TransportOptions
	co.OnMessage = c.onMessage
	co.OnWriteError = c.onWriteError
	userClosed := co.OnClosed
	co.OnClosed = func(err *sdk.Error) {
		c.failAll(wrapErr(err))
		if userClosed != nil {
			userClosed(err)
		}
	}
	conn, err := h.Open(ctx, cfg, co)
	if err != nil {
		return nil, nil, err
	}
	c.conn = conn
	c.http = conn.Properties().HTTP
	go func() {
		<-conn.Done()
		c.failAll(wrapErr(conn.Err()))
	}()
	var t mcptransport.Interface = c
	if c.http {
		t = &HTTPClient{c}
	}
	return t, conn, nil
}

// RequiresLegacyProtocol reports whether only protocol revisions before
// 2026-07-28 work over this connection.
func (c *Client) RequiresLegacyProtocol() bool { return c.conn.Properties().LegacyOnly }

// Conn returns the underlying plugin connection.
func (c *Client) Conn() *pluginhost.TransportConn { return c.conn }

// Start does nothing: Dial has connected.
func (c *Client) Start(context.Context) error { return nil }

// SendRequest sends a request and waits for its response, the end of ctx
// (which also abandons the exchange in the plugin), or the end of the
// connection.
func (c *Client) SendRequest(ctx context.Context, req mcptransport.JSONRPCRequest) (*mcptransport.JSONRPCResponse, error) {
	if err := c.conn.Err(); err != nil {
		return nil, wrapErr(err)
	}
	req.JSONRPC = mcp.JSONRPC_VERSION
	msg, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", req.Method, err)
	}
	idb, err := json.Marshal(req.ID)
	if err != nil {
		return nil, fmt.Errorf("encode %s request id: %w", req.Method, err)
	}
	key := string(idb)
	p := &pending{id: req.ID, seq: c.conn.ReserveSeq(), ch: make(chan result, 1)}
	c.mu.Lock()
	c.pending[key] = p
	c.bySeq[p.seq] = key
	c.mu.Unlock()
	// Headers travel only to a plugin that speaks HTTP: mcp-go computes
	// the 2026-07-28 revision's headers for every transport, and over
	// stdio they would cost an encode here and a decode in the plugin per
	// request for nothing.
	var header http.Header
	if c.http {
		header = c.withVersion(req.Header)
	}
	if err := c.conn.WriteSeq(p.seq, msg, header); err != nil {
		c.drop(key)
		return nil, wrapErr(err)
	}
	select {
	case r := <-p.ch:
		if sink, ok := ctx.Value(sinkKey{}).(*ResultSink); ok && req.Method == string(mcp.MethodToolsCall) {
			sinkResult(sink, r.resp)
		}
		return r.resp, r.err
	case <-ctx.Done():
		if c.drop(key) {
			c.conn.Cancel(p.seq)
		}
		return nil, ctx.Err()
	}
}

// drop forgets a pending request; it reports whether it was still pending.
func (c *Client) drop(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[key]
	if ok {
		delete(c.pending, key)
		delete(c.bySeq, p.seq)
	}
	return ok
}

// take removes and returns the pending request with the given id key.
func (c *Client) take(key string) *pending {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[key]
	if !ok {
		return nil
	}
	delete(c.pending, key)
	delete(c.bySeq, p.seq)
	return p
}

// SendNotification sends a notification and returns once the plugin has
// written it on, as mcp-go's own transports do: a request sent afterwards
// cannot overtake it (notifications/initialized before the first request),
// even over a transport whose writes run concurrently.
func (c *Client) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	if err := c.conn.Err(); err != nil {
		return wrapErr(err)
	}
	n.JSONRPC = mcp.JSONRPC_VERSION
	msg, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode %s notification: %w", n.Method, err)
	}
	return wrapErr(c.conn.Send(ctx, msg))
}

// SetNotificationHandler sets the handler of server notifications.
func (c *Client) SetNotificationHandler(f func(mcp.JSONRPCNotification)) {
	c.hmu.Lock()
	c.onNote = f
	c.hmu.Unlock()
}

// SetRequestHandler sets the handler of the server's own requests.
func (c *Client) SetRequestHandler(f mcptransport.RequestHandler) {
	c.hmu.Lock()
	c.onReq = f
	c.hmu.Unlock()
}

// GetSessionId returns the transport's session id (HTTP), or "".
func (c *Client) GetSessionId() string { return c.conn.SessionID() }

// Close closes the connection in the plugin gracefully.
func (c *Client) Close() error {
	err := c.conn.Close(context.Background())
	c.failAll(wrapErr(c.conn.Err()))
	return err
}

// incoming is any JSON-RPC message, decoded once. Its params and result
// are spans of the message, not copies.
type incoming struct {
	ID     json.RawMessage          `json:"id"`
	Method string                   `json:"method"`
	Params span                     `json:"params"`
	Result span                     `json:"result"`
	Error  *mcp.JSONRPCErrorDetails `json:"error"`
}

// span is a JSON value kept as the bytes of the message it was decoded
// from, without the copy json.RawMessage makes: the message is the
// adapter's own (pluginhost.TransportOptions.OnMessage hands it over), so a
// result is held once, not twice, while mcp-go decodes it.
type span []byte

// UnmarshalJSON keeps b, a slice of the message being decoded.
func (s *span) UnmarshalJSON(b []byte) error {
	*s = b
	return nil
}

func hasID(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

func (c *Client) onMessage(msg []byte) {
	var m incoming
	if err := json.Unmarshal(msg, &m); err != nil {
		// encoding/json refuses values nested past 10,000 levels; such a
		// value (one tool's schema) must not cost the whole message.
		pruned, n := jsondepth.Prune(msg, jsondepth.MaxDepth)
		if n == 0 || json.Unmarshal(pruned, &m) != nil {
			c.warn(sdk.NewError(sdk.CodeGarbage, "the server sent a message that is not JSON-RPC: %v", err))
			return
		}
		c.warn(sdk.NewError(sdk.CodeGarbage, "the server sent a message nested deeper than %d levels; %d values past that depth were read as null", jsondepth.MaxDepth, n))
		msg = pruned
	}
	switch {
	case m.Method != "" && !hasID(m.ID):
		var n mcp.JSONRPCNotification
		if err := json.Unmarshal(msg, &n); err != nil {
			c.warn(sdk.NewError(sdk.CodeGarbage, "the server sent a malformed %s notification: %v", m.Method, err))
			return
		}
		c.hmu.RLock()
		h := c.onNote
		c.hmu.RUnlock()
		if h != nil {
			h(n)
		}
	case m.Method != "":
		select {
		case c.slots <- struct{}{}:
			base := context.Background()
			if c.opts.RequestContext != nil {
				base = c.opts.RequestContext()
			}
			go func() {
				defer func() { <-c.slots }()
				c.serveRequest(base, m)
			}()
		default:
			c.refuse(m)
		}
	case hasID(m.ID):
		p := c.take(string(bytes.TrimSpace(m.ID)))
		if p == nil {
			return // cancelled, or an id we never sent
		}
		p.ch <- result{resp: &mcptransport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: p.id, Result: json.RawMessage(m.Result), Error: m.Error}}
	default:
		c.warn(sdk.NewError(sdk.CodeGarbage, "the server sent a JSON-RPC message with neither method nor id"))
	}
}

func (c *Client) onWriteError(seq uint64, err *sdk.Error) {
	c.mu.Lock()
	key, ok := c.bySeq[seq]
	c.mu.Unlock()
	if ok {
		if p := c.take(key); p != nil {
			p.ch <- result{err: wrapErr(err)}
			return
		}
	}
	if c.opts.OnUndeliverable != nil {
		c.opts.OnUndeliverable(err)
	}
}

func (c *Client) warn(w *sdk.Error) {
	if c.opts.OnWarning != nil {
		c.opts.OnWarning(w)
	}
}

// failAll fails every pending request with err.
func (c *Client) failAll(err error) {
	if err == nil {
		return
	}
	c.mu.Lock()
	ps := c.pending
	c.pending = map[string]*pending{}
	c.bySeq = map[uint64]string{}
	c.mu.Unlock()
	for _, p := range ps {
		p.ch <- result{err: err}
	}
}

// serveRequest answers a request of the server's own with the host's
// handler, in a context made from base.
func (c *Client) serveRequest(base context.Context, m incoming) {
	var id mcp.RequestId
	if err := json.Unmarshal(m.ID, &id); err != nil {
		return
	}
	req := mcptransport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: m.Method}
	if len(m.Params) > 0 {
		req.Params = json.RawMessage(m.Params)
	}
	c.hmu.RLock()
	h := c.onReq
	c.hmu.RUnlock()
	var resp *mcptransport.JSONRPCResponse
	if h == nil {
		resp = mcptransport.NewJSONRPCErrorResponse(id, mcp.METHOD_NOT_FOUND, "client does not handle "+m.Method, nil)
	} else {
		ctx, cancel := context.WithCancel(base)
		go func() {
			select {
			case <-c.conn.Done():
				cancel()
			case <-ctx.Done():
			}
		}()
		r, err := h(ctx, req)
		cancel()
		if err != nil {
			r = mcptransport.NewJSONRPCErrorResponse(id, errorCode(err), err.Error(), nil)
		}
		resp = r
	}
	if resp == nil {
		return
	}
	resp.JSONRPC = mcp.JSONRPC_VERSION
	b, err := json.Marshal(resp)
	if err != nil {
		return
	}
	_, _ = c.conn.Write(b, nil)
}

// refuse answers a server request over the limit at once, on the reader:
// no goroutine, no handler, and the server's next message waits for the
// answer to be written.
func (c *Client) refuse(m incoming) {
	b, err := json.Marshal(struct {
		JSONRPC string                  `json:"jsonrpc"`
		ID      json.RawMessage         `json:"id"`
		Error   mcp.JSONRPCErrorDetails `json:"error"`
	}{mcp.JSONRPC_VERSION, m.ID, mcp.JSONRPCErrorDetails{Code: RefusedCode,
		Message: fmt.Sprintf("too many concurrent requests from the server: this client handles at most %d at once", c.opts.MaxServerRequests)}})
	if err != nil {
		return // an id that is not JSON cannot be answered
	}
	_, _ = c.conn.Write(b, nil)
	if c.refused.CompareAndSwap(false, true) {
		c.warn(sdk.NewError(sdk.CodeTooLarge, "MCP server %q sent more than %d requests of its own (%s...) at once; the rest were refused; raise %s in its entry in config.yaml if it really needs more",
			c.server, c.opts.MaxServerRequests, m.Method, c.opts.RequestsLimitName))
	}
}

// closedError is an *sdk.Error with CodeClosed that mcp-go recognises as
// transport.ErrTransportClosed.
type closedError struct{ e *sdk.Error }

func (e closedError) Error() string { return e.e.Message }

func (e closedError) Is(target error) bool {
	return target == mcptransport.ErrTransportClosed || e.e.Is(target)
}

func (e closedError) Unwrap() error { return e.e }

// wrapErr returns err with the sdk's closed code mapped onto mcp-go's
// ErrTransportClosed.
func wrapErr(err error) error {
	if err == nil {
		return nil
	}
	se := sdk.AsError(err)
	if se.Code == sdk.CodeClosed {
		return closedError{se}
	}
	return err
}

// CodedError is an error of a request handler that chooses the JSON-RPC
// error code the server receives (the handler's answer is otherwise sent
// as -32603, internal error). mcp-go's client passes a handler's error on
// unwrapped, so errors.As finds it.
type CodedError interface {
	error
	JSONRPCCode() int
}

// errorCode is the JSON-RPC code of a handler's error: the one a
// CodedError chooses, else -32603.
func errorCode(err error) int {
	var c CodedError
	if errors.As(err, &c) {
		return c.JSONRPCCode()
	}
	return mcp.INTERNAL_ERROR
}
