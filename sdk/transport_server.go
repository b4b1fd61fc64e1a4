package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/rpc"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-plugin"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// transportServer is the plugin-side RPC receiver: it builds the transport on
// Open and then pumps frames between the host's stream and the transport.
type transportServer struct {
	factory TransportFactory
	broker  *plugin.MuxBroker

	mu   sync.Mutex
	conn *pluginConn
}

// pluginConn is one open transport inside the plugin.
type pluginConn struct {
	inner  Transport
	out    *frameWriter
	stream io.ReadWriteCloser
	host   *hostCallbacks

	ctx    context.Context // lives as long as the transport
	cancel context.CancelFunc

	pendingMu sync.Mutex
	pending   map[uint64]context.CancelFunc // host requests in flight

	// server-to-client requests waiting for the host's answer
	seq       atomic.Uint64
	waitersMu sync.Mutex
	waiters   map[uint64]chan *frame

	started atomic.Bool
	closed  atomic.Bool
}

// Open builds the transport and connects the message stream.
func (s *transportServer) Open(args OpenArgs, reply *OpenReply) error {
	var cfg TransportConfig
	if err := json.Unmarshal(args.Config, &cfg); err != nil {
		reply.Err = NewError(CodeConfig, "transport config: %v", err)
		return nil
	}
	host := &hostCallbacks{}
	if args.CallbackID != 0 {
		c, err := s.broker.Dial(args.CallbackID)
		if err != nil {
			reply.Err = NewError(CodeOther, "dial host callbacks: %v", err)
			return nil
		}
		host.client = rpc.NewClient(c)
	}
	inner, err := s.factory(cfg, host)
	if err != nil {
		reply.Err = AsError(err)
		return nil
	}
	var stream io.ReadWriteCloser
	if args.InheritedStream {
		stream = inheritedStream()
		if stream == nil {
			reply.Err = NewError(CodeOther, "the host passed no message stream socket (%s)", StreamFDEnv)
			return nil
		}
	} else {
		c, err := s.broker.Dial(args.StreamID)
		if err != nil {
			reply.Err = NewError(CodeOther, "dial message stream: %v", err)
			return nil
		}
		stream = c
	}
	ctx, cancel := context.WithCancel(context.Background())
	pc := &pluginConn{
		inner:   inner,
		out:     newFrameWriter(stream),
		stream:  stream,
		host:    host,
		ctx:     ctx,
		cancel:  cancel,
		pending: map[uint64]context.CancelFunc{},
		waiters: map[uint64]chan *frame{},
	}
	inner.SetNotificationHandler(pc.onNotification)
	if bi, ok := inner.(transport.BidirectionalInterface); ok {
		bi.SetRequestHandler(pc.onServerRequest)
	}
	if w, ok := inner.(Warner); ok {
		w.SetWarningHandler(func(e *Error) { _ = pc.out.write(&frame{K: frameWarning, E: e}) })
	}
	_, reply.HTTP = inner.(transport.HTTPConnection)
	if l, ok := inner.(interface{ RequiresLegacyProtocol() bool }); ok {
		reply.RequiresLegacy = l.RequiresLegacyProtocol()
	}
	s.mu.Lock()
	s.conn = pc
	s.mu.Unlock()
	go pc.readLoop()
	return nil
}

// Start starts the transport with a context that lives as long as the plugin.
func (s *transportServer) Start(_ Empty, reply *StartReply) error {
	pc := s.current()
	if pc == nil {
		reply.Err = NewError(CodeOther, "transport not open")
		return nil
	}
	if err := pc.inner.Start(pc.ctx); err != nil {
		reply.Err = AsError(err)
		return nil
	}
	pc.started.Store(true)
	reply.SessionID = pc.inner.GetSessionId()
	if w, ok := pc.inner.(Watched); ok {
		go func() {
			select {
			case <-w.Done():
				pc.sendClosed(w.Err())
			case <-pc.ctx.Done():
			}
		}()
	}
	return nil
}

// Close closes the transport.
func (s *transportServer) Close(_ Empty, _ *Empty) error {
	pc := s.current()
	if pc == nil {
		return nil
	}
	pc.shutdown()
	return nil
}

func (s *transportServer) current() *pluginConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// closeAll closes every open transport; used when the plugin is told to exit.
func (s *transportServer) closeAll() {
	if pc := s.current(); pc != nil {
		pc.shutdown()
	}
}

func (pc *pluginConn) shutdown() {
	if pc.closed.Swap(true) {
		return
	}
	_ = pc.inner.Close()
	pc.cancel()
}

func (pc *pluginConn) sendClosed(err error) {
	e := AsError(err)
	if e == nil {
		e = NewError(CodeClosed, "connection closed")
	}
	if e.Code == CodeOther {
		e.Code = CodeClosed
	}
	_ = pc.out.write(&frame{K: frameClosed, E: e})
}

// readLoop handles frames from the host until the stream ends.
func (pc *pluginConn) readLoop() {
	in := newFrameReader(pc.stream)
	for {
		f, err := in.read()
		if err != nil {
			// The host went away: nothing more will come.
			pc.shutdown()
			return
		}
		switch f.K {
		case frameRequest:
			ctx, cancel := context.WithCancel(pc.ctx)
			pc.pendingMu.Lock()
			pc.pending[f.S] = cancel
			pc.pendingMu.Unlock()
			if as, ok := pc.inner.(AsyncSender); ok {
				pc.forwardAsync(ctx, as, f)
			} else {
				go pc.forwardRequest(ctx, f)
			}
		case frameNotification:
			go pc.forwardNotification(f)
		case frameCancel:
			pc.pendingMu.Lock()
			if cancel, ok := pc.pending[f.S]; ok {
				cancel()
			}
			pc.pendingMu.Unlock()
		case frameResponse:
			pc.waitersMu.Lock()
			ch, ok := pc.waiters[f.S]
			delete(pc.waiters, f.S)
			pc.waitersMu.Unlock()
			if ok {
				ch <- f
			}
		case frameVersion:
			var v string
			if json.Unmarshal(f.M, &v) == nil {
				if hc, ok := pc.inner.(transport.HTTPConnection); ok {
					hc.SetProtocolVersion(v)
				}
			}
		}
	}
}

// wireRequest is a JSON-RPC request whose params stay raw bytes.
type wireRequest struct {
	ID     mcp.RequestId   `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

func (pc *pluginConn) forwardRequest(ctx context.Context, f *frame) {
	req, ok := pc.decodeRequest(f)
	if !ok {
		pc.dropPending(f.S)
		return
	}
	resp, err := pc.inner.SendRequest(ctx, req)
	pc.answer(f.S, resp, err)
}

// forwardAsync hands a request to an AsyncSender; the answer is written from
// the transport's own reader, with no goroutine in between.
func (pc *pluginConn) forwardAsync(ctx context.Context, as AsyncSender, f *frame) {
	req, ok := pc.decodeRequest(f)
	if !ok {
		pc.dropPending(f.S)
		return
	}
	as.SendRequestAsync(ctx, req, func(resp *transport.JSONRPCResponse, err error) {
		pc.answer(f.S, resp, err)
	})
}

// decodeRequest turns a request frame into a transport request, answering
// the frame itself when it cannot be sent.
func (pc *pluginConn) decodeRequest(f *frame) (transport.JSONRPCRequest, bool) {
	var wr wireRequest
	if err := json.Unmarshal(f.M, &wr); err != nil {
		_ = pc.out.write(&frame{K: frameResponse, S: f.S, E: NewError(CodeOther, "bad request frame: %v", err)})
		return transport.JSONRPCRequest{}, false
	}
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: wr.ID, Method: wr.Method, Header: f.H}
	if len(wr.Params) > 0 {
		req.Params = wr.Params
	}
	if !pc.started.Load() {
		_ = pc.out.write(&frame{K: frameResponse, S: f.S, E: NewError(CodeClosed, "transport not started")})
		return req, false
	}
	return req, true
}

func (pc *pluginConn) dropPending(seq uint64) {
	pc.pendingMu.Lock()
	if cancel, ok := pc.pending[seq]; ok {
		cancel()
		delete(pc.pending, seq)
	}
	pc.pendingMu.Unlock()
}

// answer writes the response frame of request seq.
func (pc *pluginConn) answer(seq uint64, resp *transport.JSONRPCResponse, err error) {
	pc.dropPending(seq)
	out := &frame{K: frameResponse, S: seq, Sid: pc.inner.GetSessionId()}
	if err != nil {
		out.E = AsError(err)
		if errors.Is(err, transport.ErrTransportClosed) && out.E.Code == CodeOther {
			out.E.Code = CodeClosed
		}
	} else if resp == nil {
		out.E = NewError(CodeOther, "transport returned no response")
	} else {
		b, merr := json.Marshal(resp)
		if merr != nil {
			out.E = NewError(CodeOther, "encode response: %v", merr)
		} else {
			out.M = b
		}
	}
	_ = pc.out.write(out)
}

func (pc *pluginConn) forwardNotification(f *frame) {
	var n mcp.JSONRPCNotification
	if err := json.Unmarshal(f.M, &n); err != nil {
		_ = pc.out.write(&frame{K: frameAck, S: f.S, E: NewError(CodeOther, "bad notification frame: %v", err)})
		return
	}
	ack := &frame{K: frameAck, S: f.S}
	if !pc.started.Load() {
		ack.E = NewError(CodeClosed, "transport not started")
	} else if err := pc.inner.SendNotification(pc.ctx, n); err != nil {
		ack.E = AsError(err)
	}
	_ = pc.out.write(ack)
}

// onNotification passes a server notification to the host.
func (pc *pluginConn) onNotification(n mcp.JSONRPCNotification) {
	b, err := json.Marshal(n)
	if err != nil {
		return
	}
	_ = pc.out.write(&frame{K: frameNotification, M: b})
}

// onServerRequest passes a server-to-client request to the host and waits
// for its answer.
func (pc *pluginConn) onServerRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode server request %s: %w", req.Method, err)
	}
	seq := pc.seq.Add(1)
	ch := make(chan *frame, 1)
	pc.waitersMu.Lock()
	pc.waiters[seq] = ch
	pc.waitersMu.Unlock()
	if err := pc.out.write(&frame{K: frameRequest, S: seq, M: b}); err != nil {
		pc.waitersMu.Lock()
		delete(pc.waiters, seq)
		pc.waitersMu.Unlock()
		return nil, err
	}
	select {
	case f := <-ch:
		if f.E != nil {
			return nil, f.E
		}
		var resp transport.JSONRPCResponse
		if err := json.Unmarshal(f.M, &resp); err != nil {
			return nil, fmt.Errorf("decode host response to %s: %w", req.Method, err)
		}
		return &resp, nil
	case <-ctx.Done():
		pc.waitersMu.Lock()
		delete(pc.waiters, seq)
		pc.waitersMu.Unlock()
		return nil, ctx.Err()
	case <-pc.ctx.Done():
		return nil, transport.ErrTransportClosed
	}
}

var inheritedOnce sync.Once

// inheritedStream returns the socket the host passed at start, once: a
// second transport in the same process uses the broker.
func inheritedStream() io.ReadWriteCloser {
	var c io.ReadWriteCloser
	inheritedOnce.Do(func() {
		fd, err := strconv.Atoi(os.Getenv(StreamFDEnv))
		if err != nil || fd < 3 {
			return
		}
		f := os.NewFile(uintptr(fd), "hermes-stream")
		if f == nil {
			return
		}
		conn, err := net.FileConn(f)
		f.Close()
		if err != nil {
			return
		}
		c = conn
	})
	return c
}
