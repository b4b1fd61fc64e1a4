package transport

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/internal/rpcx"
	"github.com/hermes-agent/hermes/sdk/internal/serve"
	"github.com/hermes-agent/hermes/sdk/internal/wire"
	tw "github.com/hermes-agent/hermes/sdk/internal/wire/transportwire"
)

// maxHostFrame bounds what the plugin accepts from the host in one frame.
const maxHostFrame = 1 << 30

// rpcServer is the plugin-side RPC receiver of one dispense.
type rpcServer struct {
	open   Opener
	early  *earlyOpen
	broker *plugin.MuxBroker
	log    hclog.Logger

	calls rpcx.Calls
	mu    sync.Mutex
	conns []*serverConn
}

// Open connects to the server and starts moving messages.
func (s *rpcServer) Open(args tw.OpenArgs, reply *tw.OpenReply[Properties]) error {
	var cfg Config
	if err := json.Unmarshal(args.Config, &cfg); err != nil {
		reply.Err = sdk.NewError(sdk.CodeContract, "transport config: %v", err)
		return nil
	}
	if s.open == nil {
		reply.Err = sdk.NewError(sdk.CodeContract, "this plugin serves no transport")
		return nil
	}
	hc, err := rpcx.DialCallbacks(s.broker, args.CallbackID)
	if err != nil {
		reply.Err = sdk.AsError(err)
		return nil
	}
	var stream io.ReadWriteCloser
	if args.InheritedStream {
		if c := serve.InheritedStream(); c != nil {
			stream = c
		} else {
			reply.Err = sdk.NewError(sdk.CodeContract, "the host passed no message stream socket (%s)", sdk.StreamFDEnv)
			return nil
		}
	} else {
		c, err := s.broker.Dial(args.StreamID)
		if err != nil {
			reply.Err = sdk.NewError(sdk.CodeClosed, "dial message stream: %v", err)
			return nil
		}
		stream = c
	}
	sc := newServerConn(s.log, stream)
	host := &pluginHost{hc: hc, sc: sc}
	ctx, end := s.calls.Begin(args.ID, args.Deadline)
	defer end()
	if cfg.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.ConnectTimeout)
		defer cancel()
	}
	conn, err, early := s.early.take(ctx, args.Config, host)
	if !early {
		conn, err = s.open(ctx, cfg, host)
	}
	if err != nil {
		reply.Err = sdk.AsError(err)
		_ = stream.Close()
		return nil
	}
	sc.attach(conn)
	if d, ok := conn.(Describer); ok {
		reply.Properties = d.Properties()
	}
	reply.SessionID = *sc.sid.Load()
	s.mu.Lock()
	s.conns = append(s.conns, sc)
	s.mu.Unlock()
	sc.serve()
	return nil
}

// Close closes the connections; with Detach it answers first and then
// closes them and exits the plugin process.
func (s *rpcServer) Close(args tw.CloseArgs, reply *rpcx.ErrReply) error {
	return rpcx.Do(&s.calls, &args, &reply.Err, func(context.Context) error {
		if args.Detach {
			go serve.Exit("the host detached")
		} else {
			s.closeAll()
		}
		return nil
	})
}

// Cancel ends the context of a running call.
func (s *rpcServer) Cancel(args rpcx.CancelArgs, _ *rpcx.ErrReply) error {
	s.calls.Cancel(args.ID)
	return nil
}

func (s *rpcServer) closeAll() {
	s.mu.Lock()
	conns := append([]*serverConn(nil), s.conns...)
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, sc := range conns {
		wg.Add(1)
		go func() { defer wg.Done(); sc.close() }()
	}
	wg.Wait()
}

// pluginHost implements Host for a Conn.
type pluginHost struct {
	hc *rpcx.Client
	sc *serverConn
}

func (h *pluginHost) Headers(ctx context.Context, req HeadersRequest) (map[string]string, error) {
	var reply tw.HeadersReply
	err := h.hc.Call(ctx, tw.MethodHeaders, &tw.HeadersArgs[HeadersRequest]{Req: req}, &reply)
	return reply.Headers, err
}

func (h *pluginHost) Challenge(ctx context.Context, c ChallengeRequest) (ChallengeAnswer, error) {
	var reply tw.ChallengeReply[ChallengeAnswer]
	err := h.hc.Call(ctx, tw.MethodChallenge, &tw.ChallengeArgs[ChallengeRequest]{Challenge: c}, &reply)
	return reply.Answer, err
}

func (h *pluginHost) Warn(w *sdk.Error) {
	if w != nil {
		h.sc.sendError(tw.FrameWarning, 0, w)
	}
}

// serverConn is one open connection inside the plugin.
type serverConn struct {
	log        hclog.Logger
	conn       Conn
	stream     io.ReadWriteCloser
	out        *wire.Writer
	concurrent bool
	// borrows: the Conn is done with each message when its Write returns
	// (Borrower), so the host's frames are read without a copy each.
	borrows bool

	ctx    context.Context // lives as long as the connection
	cancel context.CancelFunc

	mu       sync.Mutex
	inflight map[uint64]context.CancelFunc
	workers  workers // run concurrent writes

	sid       atomic.Pointer[string] // the last session id the host was told
	closeOnce sync.Once
	closed    chan struct{}
}

// newServerConn returns the plugin's side of a connection on the message
// stream, before its Conn is open.
func newServerConn(log hclog.Logger, stream io.ReadWriteCloser) *serverConn {
	return &serverConn{
		log:      log,
		stream:   stream,
		out:      wire.NewWriter(stream),
		inflight: map[uint64]context.CancelFunc{},
		closed:   make(chan struct{}),
		workers:  workers{tasks: make(chan func())},
	}
}

// attach makes conn, open, the connection's Conn; the host is told its
// session id in the answer to Open.
func (sc *serverConn) attach(conn Conn) {
	id := conn.SessionID()
	sc.sid.Store(&id)
	sc.conn = conn
	sc.ctx, sc.cancel = context.WithCancel(context.Background())
	if c, ok := conn.(Concurrent); ok {
		sc.concurrent = c.ConcurrentWrites()
	}
	if b, ok := conn.(Borrower); ok {
		sc.borrows = !sc.concurrent && b.BorrowsMessages()
	}
}

// serve starts moving messages both ways.
func (sc *serverConn) serve() {
	go sc.readHost()
	go sc.pump()
}

// close closes the connection gracefully, once; later calls wait for it.
func (sc *serverConn) close() {
	sc.closeOnce.Do(func() {
		_ = sc.conn.Close()
		sc.cancel()
		close(sc.closed)
	})
	<-sc.closed
}

// readHost handles frames from the host until the stream ends. For a Conn
// that borrows its messages a frame's payload is the reader's buffer, valid
// until the next frame is read: every use of it below is over by then (the
// write is synchronous, and what is kept is copied: the headers' strings,
// the version).
func (sc *serverConn) readHost() {
	in := wire.NewReader(sc.stream, maxHostFrame)
	read := in.Read
	if sc.borrows {
		read = in.ReadShared
	}
	started := false
	for {
		f, err := read()
		if err != nil {
			// The host went away or broke the contract: nothing more
			// will come. Exit follows from the host's death.
			if !errors.Is(err, io.EOF) {
				sc.log.Warn("message stream from the host failed", "error", err)
			}
			go sc.close()
			return
		}
		if !started {
			// The host sends its first frame once it has the answer to
			// Open: the plugin's start, that answer's encoding included,
			// is over (serve.Started).
			serve.Started()
			started = true
		}
		switch f.Kind {
		case tw.FrameMessage, tw.FrameHeaderMessage, tw.FrameSyncMessage:
			msg, hdr, err := splitHeader(f)
			if err != nil {
				sc.sendError(tw.FrameWriteError, f.Seq, sdk.NewError(sdk.CodeContract, "bad message frame: %v", err))
				continue
			}
			sc.write(f.Seq, msg, hdr, f.Kind == tw.FrameSyncMessage)
		case tw.FrameCancel:
			sc.mu.Lock()
			if cancel, ok := sc.inflight[f.Seq]; ok {
				cancel()
			}
			sc.mu.Unlock()
		case tw.FrameVersion:
			if vs, ok := sc.conn.(VersionSetter); ok {
				vs.SetProtocolVersion(string(f.Payload))
			}
		}
	}
}

// splitHeader returns a frame's message and its HTTP headers, if any.
func splitHeader(f wire.Frame) ([]byte, http.Header, error) {
	if f.Kind != tw.FrameHeaderMessage {
		return f.Payload, nil, nil
	}
	if len(f.Payload) < 4 {
		return nil, nil, errors.New("short header")
	}
	n := binary.BigEndian.Uint32(f.Payload[:4])
	if uint64(n) > uint64(len(f.Payload)-4) {
		return nil, nil, errors.New("header longer than the frame")
	}
	h, err := tw.ParseHeader(f.Payload[4 : 4+n])
	if err != nil {
		return nil, nil, err
	}
	return f.Payload[4+n:], h, nil
}

// write passes one message to the Conn, in order or in its own goroutine.
// With ack the host waits for the write: it is told when it is done.
func (sc *serverConn) write(seq uint64, msg []byte, hdr http.Header, ack bool) {
	if !sc.concurrent {
		ctx := sc.ctx
		if hdr != nil {
			ctx = withMessageHeader(ctx, hdr)
		}
		sc.finishWrite(seq, sc.conn.Write(ctx, msg), ack)
		return
	}
	ctx, cancel := context.WithCancel(sc.ctx)
	if hdr != nil {
		ctx = withMessageHeader(ctx, hdr)
	}
	sc.mu.Lock()
	sc.inflight[seq] = cancel
	sc.mu.Unlock()
	sc.workers.run(sc.ctx.Done(), func() {
		err := sc.conn.Write(ctx, msg)
		sc.mu.Lock()
		delete(sc.inflight, seq)
		sc.mu.Unlock()
		cancel()
		sc.finishWrite(seq, err, ack)
	})
}

// maxIdleWorkers is how many goroutines of a connection wait for its next
// concurrent write once theirs is done.
const maxIdleWorkers = 4

// workers runs a connection's concurrent writes on goroutines that outlive
// one write. A write through net/http grows a new goroutine's stack several
// times over (runtime.copystack was 6 % of the HTTP plugin's CPU per call,
// a goroutine per write); a goroutine that wrote before has its stack.
type workers struct {
	tasks chan func() // unbuffered: a send succeeds only to a waiting worker
	idle  atomic.Int32
}

// run runs f on an idle worker, or on a new one when none waits. Workers
// end when done is closed.
func (w *workers) run(done <-chan struct{}, f func()) {
	select {
	case w.tasks <- f:
	default:
		go w.work(done, f)
	}
}

func (w *workers) work(done <-chan struct{}, f func()) {
	for {
		f()
		if w.idle.Add(1) > maxIdleWorkers {
			w.idle.Add(-1)
			return
		}
		select {
		case f = <-w.tasks:
			w.idle.Add(-1)
		case <-done:
			w.idle.Add(-1)
			return
		}
	}
}

func (sc *serverConn) finishWrite(seq uint64, err error, ack bool) {
	if err == nil && ack {
		_ = sc.out.Write(tw.FrameWritten, seq)
	}
	if err != nil {
		e := sdk.AsError(err)
		if sc.ctx.Err() != nil && e.Code == sdk.CodeOther {
			e = &sdk.Error{Code: sdk.CodeClosed, Message: e.Message}
		}
		sc.sendError(tw.FrameWriteError, seq, e)
	}
	sc.syncSession()
}

// pump moves the server's messages to the host until the connection ends.
func (sc *serverConn) pump() {
	for {
		msg, err := sc.conn.Read(sc.ctx)
		if err != nil {
			e := sdk.AsError(err)
			if e.Code == sdk.CodeOther || e.Code == sdk.CodeCanceled {
				e = &sdk.Error{Code: sdk.CodeClosed, Message: e.Message}
			}
			sc.sendError(tw.FrameClosed, 0, e)
			return
		}
		sc.syncSession()
		if err := sc.out.Write(tw.FrameMessage, 0, msg); err != nil {
			go sc.close()
			return
		}
	}
}

// syncSession tells the host when the session id changed. It runs twice
// per exchange and allocates only on a change.
func (sc *serverConn) syncSession() {
	id := sc.conn.SessionID()
	if p := sc.sid.Load(); p != nil && *p == id {
		return
	}
	changed := new(string)
	*changed = id
	sc.sid.Store(changed)
	_ = sc.out.Write(tw.FrameSession, 0, []byte(id))
}

func (sc *serverConn) sendError(kind byte, seq uint64, e *sdk.Error) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	_ = sc.out.Write(kind, seq, b)
}
