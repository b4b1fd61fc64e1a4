package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/rpc"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// ClientOptions configures the host side of a transport plugin.
type ClientOptions struct {
	// Host answers the plugin's callbacks; nil answers nothing.
	Host Host
	// OnClosed is called once, in its own goroutine, when the connection
	// ends without the host closing it: the plugin died, the server exited,
	// the stream broke.
	OnClosed func(err error)
	// OnWarning is called for each warning the plugin reports.
	OnWarning func(w *Error)
	// CloseTimeout bounds Close; default 5s.
	CloseTimeout time.Duration
	// Stream, when set, is the host's end of the socket passed to the
	// plugin process at start (StreamFDEnv); messages then bypass the
	// broker. Leave nil to use a broker stream.
	Stream net.Conn
}

// TransportClient is the host side of a transport plugin. It implements
// mcp-go's transport.Interface and transport.BidirectionalInterface, so
// client.NewClient(t) works unchanged. Transports that speak HTTP are
// returned as *HTTPTransportClient, which adds transport.HTTPConnection.
type TransportClient struct {
	rpc    *TransportRPC
	cfg    TransportConfig
	opts   ClientOptions
	stream net.Conn
	out    *frameWriter

	seq     atomic.Uint64
	mu      sync.Mutex
	pending map[uint64]chan *frame // requests and notifications awaiting an answer

	Handlers

	sessionID   atomic.Value // string
	lastWarning atomic.Pointer[Error]

	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
	byHost    atomic.Bool
}

// HTTPTransportClient is a TransportClient whose plugin speaks MCP over
// HTTP: it passes the negotiated protocol version to the plugin.
type HTTPTransportClient struct {
	*TransportClient
	requiresLegacy bool
}

// SetProtocolVersion tells the plugin the negotiated protocol version.
func (h *HTTPTransportClient) SetProtocolVersion(version string) {
	b, _ := json.Marshal(version)
	_ = h.out.write(&frame{K: frameVersion, M: b})
}

// RequiresLegacyProtocol reports whether the plugin's transport can only
// speak protocol versions before 2026-07-28.
func (h *HTTPTransportClient) RequiresLegacyProtocol() bool { return h.requiresLegacy }

// NewTransportClient opens the plugin's transport for one server and returns
// it as an mcp-go transport (a *TransportClient or *HTTPTransportClient).
// Nothing connects to the server until Start.
func NewTransportClient(r *TransportRPC, cfg TransportConfig, opts ClientOptions) (transport.Interface, error) {
	if opts.CloseTimeout == 0 {
		opts.CloseTimeout = 5 * time.Second
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode transport config of %q: %w", cfg.Server, err)
	}
	type accepted struct {
		c   net.Conn
		err error
	}
	acc := make(chan accepted, 1)
	var streamID uint32
	if opts.Stream != nil {
		acc <- accepted{opts.Stream, nil}
	} else {
		streamID = r.broker.NextId()
		go func() {
			c, err := r.broker.Accept(streamID)
			acc <- accepted{c, err}
		}()
	}
	var callbackID uint32
	if opts.Host != nil {
		callbackID = r.broker.NextId()
		go r.broker.AcceptAndServe(callbackID, &hostCallbackServer{impl: opts.Host})
	}
	var reply OpenReply
	if err := r.client.Call("Plugin.Open", OpenArgs{Config: raw, StreamID: streamID, CallbackID: callbackID, InheritedStream: opts.Stream != nil}, &reply); err != nil {
		return nil, NewError(CodeClosed, "transport plugin for %q: open: %v", cfg.Server, err)
	}
	if reply.Err != nil {
		return nil, reply.Err
	}
	a := <-acc
	if a.err != nil {
		return nil, NewError(CodeClosed, "transport plugin for %q: message stream: %v", cfg.Server, a.err)
	}
	t := &TransportClient{
		rpc:     r,
		cfg:     cfg,
		opts:    opts,
		stream:  a.c,
		out:     newFrameWriter(a.c),
		pending: map[uint64]chan *frame{},
		done:    make(chan struct{}),
	}
	t.sessionID.Store("")
	go t.readLoop()
	if reply.HTTP {
		return &HTTPTransportClient{TransportClient: t, requiresLegacy: reply.RequiresLegacy}, nil
	}
	return t, nil
}

// Start connects the plugin's transport to the server. ctx bounds only the
// start itself.
func (t *TransportClient) Start(ctx context.Context) error {
	var reply StartReply
	call := t.rpc.client.Go("Plugin.Start", Empty{}, &reply, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
		if call.Error != nil {
			return t.pluginGone(call.Error)
		}
		if reply.Err != nil {
			return reply.Err
		}
		t.sessionID.Store(reply.SessionID)
		return nil
	case <-t.done:
		return t.closeErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SendRequest sends a request to the server and waits for its response, the
// end of ctx (which abandons the call in the plugin too), or the end of the
// connection.
func (t *TransportClient) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	select {
	case <-t.done:
		return nil, t.closeErr
	default:
	}
	msg, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", req.Method, err)
	}
	seq, ch := t.register()
	if err := t.out.write(&frame{K: frameRequest, S: seq, M: msg, H: req.Header}); err != nil {
		t.unregister(seq)
		return nil, t.pluginGone(err)
	}
	select {
	case f := <-ch:
		if f.Sid != "" {
			t.sessionID.Store(f.Sid)
		}
		if f.E != nil {
			return nil, f.E
		}
		resp := new(transport.JSONRPCResponse)
		if err := json.Unmarshal(f.M, resp); err != nil {
			return nil, fmt.Errorf("decode %s response: %w", req.Method, err)
		}
		return resp, nil
	case <-ctx.Done():
		t.unregister(seq)
		_ = t.out.write(&frame{K: frameCancel, S: seq})
		return nil, ctx.Err()
	case <-t.done:
		return nil, t.closeErr
	}
}

// SendNotification sends a notification to the server.
func (t *TransportClient) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	select {
	case <-t.done:
		return t.closeErr
	default:
	}
	msg, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode %s notification: %w", n.Method, err)
	}
	seq, ch := t.register()
	if err := t.out.write(&frame{K: frameNotification, S: seq, M: msg}); err != nil {
		t.unregister(seq)
		return t.pluginGone(err)
	}
	select {
	case f := <-ch:
		if f.E != nil {
			return f.E
		}
		return nil
	case <-ctx.Done():
		t.unregister(seq)
		return ctx.Err()
	case <-t.done:
		return t.closeErr
	}
}

// GetSessionId returns the transport's session id (HTTP), or "".
func (t *TransportClient) GetSessionId() string { return t.sessionID.Load().(string) }

// Close closes the transport in the plugin. The host still kills the plugin
// process afterwards.
func (t *TransportClient) Close() error {
	t.byHost.Store(true)
	call := t.rpc.client.Go("Plugin.Close", Empty{}, &Empty{}, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
	case <-t.done:
	case <-time.After(t.opts.CloseTimeout):
	}
	t.finish(NewError(CodeClosed, "connection to %q closed", t.cfg.Server))
	return nil
}

// Done is closed when the connection has ended; Err then says why.
func (t *TransportClient) Done() <-chan struct{} { return t.done }

// Err returns why the connection ended, or nil while it is open.
func (t *TransportClient) Err() error {
	select {
	case <-t.done:
		return t.closeErr
	default:
		return nil
	}
}

// LastWarning returns the last warning the plugin reported, or nil.
func (t *TransportClient) LastWarning() *Error { return t.lastWarning.Load() }

func (t *TransportClient) register() (uint64, chan *frame) {
	seq := t.seq.Add(1)
	ch := make(chan *frame, 1)
	t.mu.Lock()
	t.pending[seq] = ch
	t.mu.Unlock()
	return seq, ch
}

func (t *TransportClient) unregister(seq uint64) {
	t.mu.Lock()
	delete(t.pending, seq)
	t.mu.Unlock()
}

func (t *TransportClient) pluginGone(err error) error {
	e := NewError(CodeClosed, "transport plugin for server %q stopped: %v", t.cfg.Server, err)
	t.finish(e)
	return t.closeErr
}

// finish ends the connection once: every waiting call fails with err.
func (t *TransportClient) finish(err error) {
	t.closeOnce.Do(func() {
		t.closeErr = err
		close(t.done)
		_ = t.stream.Close()
		if !t.byHost.Load() && t.opts.OnClosed != nil {
			go t.opts.OnClosed(err)
		}
	})
}

func (t *TransportClient) readLoop() {
	in := newFrameReader(t.stream)
	for {
		f, err := in.read()
		if err != nil {
			t.finish(NewError(CodeClosed, "transport plugin for server %q stopped", t.cfg.Server))
			return
		}
		switch f.K {
		case frameResponse, frameAck:
			t.mu.Lock()
			ch, ok := t.pending[f.S]
			delete(t.pending, f.S)
			t.mu.Unlock()
			if ok {
				ch <- f
			}
		case frameNotification:
			var n mcp.JSONRPCNotification
			if json.Unmarshal(f.M, &n) != nil {
				continue
			}
			h := t.Notification()
			if h != nil {
				h(n)
			}
		case frameRequest:
			go t.serveServerRequest(f)
		case frameClosed:
			e := f.E
			if e == nil {
				e = NewError(CodeClosed, "connection to %q ended", t.cfg.Server)
			}
			t.finish(e)
		case frameWarning:
			if f.E != nil {
				t.lastWarning.Store(f.E)
				if t.opts.OnWarning != nil {
					t.opts.OnWarning(f.E)
				}
			}
		}
	}
}

// serveServerRequest answers a server-to-client request with the host's
// handler.
func (t *TransportClient) serveServerRequest(f *frame) {
	reply := &frame{K: frameResponse, S: f.S}
	var req transport.JSONRPCRequest
	var raw struct {
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(f.M, &req); err != nil {
		reply.E = NewError(CodeOther, "decode server request: %v", err)
		_ = t.out.write(reply)
		return
	}
	if json.Unmarshal(f.M, &raw) == nil && len(raw.Params) > 0 {
		req.Params = raw.Params
	}
	h := t.Request()
	if h == nil {
		resp := &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID,
			Error: &mcp.JSONRPCErrorDetails{Code: mcp.METHOD_NOT_FOUND, Message: "client does not handle " + req.Method}}
		reply.M, _ = json.Marshal(resp)
		_ = t.out.write(reply)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-t.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	resp, err := h(ctx, req)
	if err != nil {
		reply.E = AsError(err)
	} else if resp != nil {
		reply.M, err = json.Marshal(resp)
		if err != nil {
			reply.E = NewError(CodeOther, "encode response to %s: %v", req.Method, err)
		}
	}
	_ = t.out.write(reply)
}
