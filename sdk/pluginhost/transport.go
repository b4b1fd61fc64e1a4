package pluginhost

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/rpc"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/internal/rpcx"
	"github.com/hermes-agent/hermes/sdk/internal/wire"
	tw "github.com/hermes-agent/hermes/sdk/internal/wire/transportwire"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// TransportPlugin is the host's go-plugin glue of the transport kind: put
// it in the plugin set under sdk.KindTransport, and Dispense returns a
// *Transport.
type TransportPlugin struct{}

// Server is the plugin's side: not served by a host.
func (TransportPlugin) Server(*plugin.MuxBroker) (any, error) {
	return nil, sdk.NewError(sdk.CodeContract, "a host does not serve the transport kind")
}

// Client returns the host-side handle, a *Transport.
func (TransportPlugin) Client(b *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return &Transport{rpc: rpcx.NewClient(c, "transport plugin"), broker: b}, nil
}

// Transport is the host's handle on a dispensed transport plugin; Open a
// connection with it.
type Transport struct {
	rpc    *rpcx.Client
	broker *plugin.MuxBroker
}

// DefaultMaxMessageBytes is the largest message a host accepts from a
// transport plugin when TransportOptions.MaxMessageBytes is 0.
const DefaultMaxMessageBytes = transport.DefaultMaxMessageBytes

// TransportOptions configures the host side of a connection. The callbacks run
// on the connection's reader: they must return quickly (hand long work to a
// goroutine) and must not call Close.
type TransportOptions struct {
	// Headers answers the plugin's per-request header callback; nil serves
	// no callbacks.
	Headers func(ctx context.Context, req transport.HeadersRequest) (map[string]string, error)
	// Challenge answers the plugin's challenge callback (a 401 or 403 to
	// a request made with Headers); nil answers every challenge with a
	// CodeAuth error. Served only along with Headers.
	Challenge func(ctx context.Context, c transport.ChallengeRequest) (transport.ChallengeAnswer, error)
	// ChallengeTimeout bounds one Challenge; default 10 minutes (it may
	// include an interactive step-up).
	ChallengeTimeout time.Duration
	// OnMessage receives each message from the server. The slice is the
	// callee's.
	OnMessage func(msg []byte)
	// OnWriteError receives the failure of writing message seq (the seq
	// Write returned).
	OnWriteError func(seq uint64, err *sdk.Error)
	// OnClosed is called once, in its own goroutine, when the connection
	// ends without the host closing it: the plugin died, the server exited,
	// the stream broke, a message was over the limit.
	OnClosed func(err *sdk.Error)
	// OnWarning receives each warning the plugin reports.
	OnWarning func(w *sdk.Error)
	// MaxMessageBytes is the largest message accepted from the plugin;
	// default DefaultMaxMessageBytes. A larger one ends the connection with
	// a CodeTooLarge error naming the server and the limit.
	MaxMessageBytes uint64
	// LimitName is the config key users set to raise MaxMessageBytes, for
	// the error message; default "max_message_bytes".
	LimitName string
	// CloseTimeout bounds Close when its ctx has no deadline; default 10s.
	CloseTimeout time.Duration
	// Stream, when set, is the host's end of the socket passed to the
	// plugin process at start (sdk.StreamFDEnv); messages then bypass the
	// broker. Leave nil to use a broker stream.
	Stream net.Conn
	// PluginExit, when set, explains a message stream that broke without
	// the plugin saying why: it waits briefly for the plugin process to
	// be gone and says which process it was and how it ended (for example
	// "hermes-transport-stdio (pid 4242) was killed by signal SIGKILL"),
	// or returns "" while the process runs.
	PluginExit func() string
}

// TransportConn is the host side of one connection through a transport plugin.
type TransportConn struct {
	h      *Transport
	server string
	opts   TransportOptions
	stream net.Conn
	out    *wire.Writer
	props  transport.Properties

	seq         atomic.Uint64
	acks        sync.Map // seq → chan *sdk.Error, for Send
	sessionID   atomic.Pointer[string]
	lastWarning atomic.Pointer[sdk.Error]

	done      chan struct{}
	closeOnce sync.Once
	closeErr  *sdk.Error
	byHost    atomic.Bool
}

// TransportOpenConfig is the config Open sends for cfg with the bound
// maxMessageBytes (DefaultMaxMessageBytes when 0): what a host writes for
// an early open (sdk.EarlyOpenFDEnv) must be these bytes exactly.
func TransportOpenConfig(cfg transport.Config, maxMessageBytes uint64) ([]byte, error) {
	if maxMessageBytes == 0 {
		maxMessageBytes = DefaultMaxMessageBytes
	}
	cfg.MaxMessageBytes = maxMessageBytes
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode transport config of %q: %w", cfg.Server, err)
	}
	return raw, nil
}

// Open asks the plugin to connect to the server cfg describes and returns
// the connection. ctx bounds the connecting; when it ends first, Open
// returns its error and the caller should kill the plugin.
func (h *Transport) Open(ctx context.Context, cfg transport.Config, opts TransportOptions) (*TransportConn, error) {
	if opts.MaxMessageBytes == 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.LimitName == "" {
		opts.LimitName = "max_message_bytes"
	}
	if opts.CloseTimeout == 0 {
		opts.CloseTimeout = 10 * time.Second
	}
	raw, err := TransportOpenConfig(cfg, opts.MaxMessageBytes)
	if err != nil {
		return nil, err
	}
	c := &TransportConn{h: h, server: cfg.Server, opts: opts, done: make(chan struct{})}
	empty := ""
	c.sessionID.Store(&empty)

	args := tw.OpenArgs{Config: raw}
	type accepted struct {
		c   net.Conn
		err error
	}
	acc := make(chan accepted, 1)
	if opts.Stream != nil {
		args.InheritedStream = true
		acc <- accepted{opts.Stream, nil}
	} else {
		args.StreamID = h.broker.NextId()
		go func() {
			s, err := h.broker.Accept(args.StreamID)
			acc <- accepted{s, err}
		}()
	}
	if opts.Headers != nil {
		ct := opts.ChallengeTimeout
		if ct <= 0 {
			ct = 10 * time.Minute
		}
		args.CallbackID = rpcx.ServeCallbacks(h.broker, &transportCallbacks{headers: opts.Headers, challenge: opts.Challenge, timeout: 60 * time.Second, challengeTimeout: ct})
	}
	// The reader starts as soon as the stream is there: a server may speak
	// (warnings, notifications) before Open returns.
	started := make(chan error, 1)
	go func() {
		select {
		case a := <-acc:
			if a.err != nil {
				started <- a.err
				return
			}
			c.stream = a.c
			c.out = wire.NewWriter(a.c)
			started <- nil
			c.readLoop()
		case <-ctx.Done():
			started <- ctx.Err()
		}
	}()
	var reply tw.OpenReply[transport.Properties]
	if err := h.rpc.Call(ctx, tw.MethodOpen, &args, &reply); err != nil {
		if reply.Err == nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, sdk.NewError(sdk.CodeClosed, "transport plugin for server %q: open: %v", cfg.Server, err)
		}
		if serr := <-started; serr == nil {
			c.byHost.Store(true)
			c.finish(reply.Err)
		}
		return nil, reply.Err
	}
	if err := <-started; err != nil {
		return nil, sdk.NewError(sdk.CodeClosed, "transport plugin for server %q: message stream: %v", cfg.Server, err)
	}
	c.props = reply.Properties
	c.sessionID.Store(&reply.SessionID)
	return c, nil
}

// Properties returns what the plugin said about the connection.
func (c *TransportConn) Properties() transport.Properties { return c.props }

// SessionID returns the transport's current session id, or "".
func (c *TransportConn) SessionID() string { return *c.sessionID.Load() }

// Write sends one message to the server and returns the sequence number
// that names it for Cancel and OnWriteError. header, when not nil, travels
// with the message (HTTP headers of the current protocol).
func (c *TransportConn) Write(msg []byte, header http.Header) (uint64, error) {
	seq := c.ReserveSeq()
	return seq, c.WriteSeq(seq, msg, header)
}

// ReserveSeq returns a fresh sequence number for WriteSeq, so that a caller
// can record it before the message leaves (a write error may come back
// before WriteSeq returns).
func (c *TransportConn) ReserveSeq() uint64 { return c.seq.Add(1) }

// WriteSeq sends one message named seq (from ReserveSeq); see Write.
func (c *TransportConn) WriteSeq(seq uint64, msg []byte, header http.Header) error {
	select {
	case <-c.done:
		return c.closeErr
	default:
	}
	var err error
	if len(header) == 0 {
		err = c.out.Write(tw.FrameMessage, seq, msg)
	} else {
		hb, merr := tw.AppendHeader(make([]byte, 4, 256), header)
		if merr != nil {
			return fmt.Errorf("encode message headers: %w", merr)
		}
		binary.BigEndian.PutUint32(hb[:4], uint32(len(hb)-4))
		err = c.out.Write(tw.FrameHeaderMessage, seq, hb, msg)
	}
	if err != nil {
		return c.pluginGone(err)
	}
	return nil
}

// Send writes one message and waits until the plugin has written it on
// (an HTTP transport: its exchange is done), the end of ctx, or the end of
// the connection; a write error comes back with its code. It keeps
// messages in order across a transport that runs writes concurrently:
// what the host writes after Send returns cannot overtake this message.
// The host's MCP client sends notifications this way, as mcp-go's own
// transports do.
func (c *TransportConn) Send(ctx context.Context, msg []byte) error {
	select {
	case <-c.done:
		return c.closeErr
	default:
	}
	seq := c.ReserveSeq()
	ch := make(chan *sdk.Error, 1)
	c.acks.Store(seq, ch)
	defer c.acks.Delete(seq)
	if err := c.out.Write(tw.FrameSyncMessage, seq, msg); err != nil {
		return c.pluginGone(err)
	}
	select {
	case e := <-ch:
		if e != nil {
			return e
		}
		return nil
	case <-c.done:
		return c.closeErr
	case <-ctx.Done():
		c.Cancel(seq)
		return ctx.Err()
	}
}

// Cancel abandons the exchange message seq started (an HTTP transport ends
// its request). It does not tell the server; the host's protocol layer does.
func (c *TransportConn) Cancel(seq uint64) {
	select {
	case <-c.done:
	default:
		_ = c.out.Write(tw.FrameCancel, seq)
	}
}

// SetProtocolVersion tells the plugin the negotiated protocol version.
func (c *TransportConn) SetProtocolVersion(version string) {
	select {
	case <-c.done:
	default:
		_ = c.out.Write(tw.FrameVersion, 0, []byte(version))
	}
}

// Close closes the connection in the plugin gracefully and waits for it,
// within ctx (or CloseTimeout). The host still stops the plugin process
// afterwards.
func (c *TransportConn) Close(ctx context.Context) error {
	c.byHost.Store(true)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.CloseTimeout)
		defer cancel()
	}
	_ = c.h.rpc.Call(ctx, tw.MethodClose, &tw.CloseArgs{}, &rpcx.ErrReply{})
	c.finish(sdk.NewError(sdk.CodeClosed, "connection to %q closed", c.server))
	return nil
}

// Detach asks the plugin to close the connection gracefully on its own and
// then exit, and returns as soon as the plugin has the request (a one-shot
// command's output is complete; the server's shutdown must not hold the
// user's prompt). The host must not kill the plugin afterwards.
func (c *TransportConn) Detach(ctx context.Context) error {
	c.byHost.Store(true)
	err := c.h.rpc.Call(ctx, tw.MethodClose, &tw.CloseArgs{Detach: true}, &rpcx.ErrReply{})
	c.finish(sdk.NewError(sdk.CodeClosed, "connection to %q closed", c.server))
	return err
}

// Done is closed when the connection has ended; Err then says why.
func (c *TransportConn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, or nil while it is open.
func (c *TransportConn) Err() error {
	select {
	case <-c.done:
		return c.closeErr
	default:
		return nil
	}
}

// LastWarning returns the last warning the plugin reported, or nil.
func (c *TransportConn) LastWarning() *sdk.Error { return c.lastWarning.Load() }

func (c *TransportConn) pluginGone(err error) error {
	c.finish(c.stopped(err))
	return c.closeErr
}

// stopped is the error of a message stream that broke (err, when not nil,
// is how): the plugin process's exit when it is known.
func (c *TransportConn) stopped(err error) *sdk.Error {
	if c.opts.PluginExit != nil && !c.byHost.Load() {
		if how := c.opts.PluginExit(); how != "" {
			return sdk.NewError(sdk.CodeClosed, "transport plugin %s, serving MCP server %q", how, c.server)
		}
	}
	if err == nil {
		return sdk.NewError(sdk.CodeClosed, "transport plugin for server %q stopped", c.server)
	}
	return sdk.NewError(sdk.CodeClosed, "transport plugin for server %q stopped: %v", c.server, err)
}

// finish ends the connection once.
func (c *TransportConn) finish(err *sdk.Error) {
	c.closeOnce.Do(func() {
		// Read before done is closed: whoever waits on done may close the
		// connection at once (the host drops a session that ended), and
		// that Close must not hide the end it reacts to.
		byHost := c.byHost.Load()
		c.closeErr = err
		close(c.done)
		if c.stream != nil {
			_ = c.stream.Close()
		}
		if !byHost && c.opts.OnClosed != nil {
			go c.opts.OnClosed(err)
		}
	})
}

func (c *TransportConn) readLoop() {
	in := wire.NewReader(c.stream, c.opts.MaxMessageBytes)
	for {
		f, err := in.Read()
		if err != nil {
			select {
			case <-c.done:
				return // ended already; this is the stream being closed
			default:
			}
			var tl *wire.TooLargeError
			switch {
			case errors.As(err, &tl):
				c.finish(&sdk.Error{Code: sdk.CodeTooLarge, Message: fmt.Sprintf(
					"MCP server %q sent a message of %d bytes, over the limit of %d bytes; raise %s in its entry in config.yaml if it really sends messages that large",
					c.server, tl.Size, tl.Limit, c.opts.LimitName)})
			case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
				c.finish(c.stopped(nil))
			default:
				c.finish(c.stopped(err))
			}
			return
		}
		switch f.Kind {
		case tw.FrameMessage:
			if c.opts.OnMessage != nil {
				c.opts.OnMessage(f.Payload)
			}
		case tw.FrameWritten:
			if ch, ok := c.acks.LoadAndDelete(f.Seq); ok {
				ch.(chan *sdk.Error) <- nil
			}
		case tw.FrameWriteError:
			e := decodeError(f.Payload, c.server)
			if ch, ok := c.acks.LoadAndDelete(f.Seq); ok {
				ch.(chan *sdk.Error) <- e
			} else if c.opts.OnWriteError != nil {
				c.opts.OnWriteError(f.Seq, e)
			}
		case tw.FrameSession:
			id := string(f.Payload)
			c.sessionID.Store(&id)
		case tw.FrameWarning:
			w := decodeError(f.Payload, c.server)
			c.lastWarning.Store(w)
			if c.opts.OnWarning != nil {
				c.opts.OnWarning(w)
			}
		case tw.FrameClosed:
			c.finish(decodeError(f.Payload, c.server))
		}
	}
}

// decodeError reads an *sdk.Error from a frame; a malformed one is itself an
// error to report, not a reason to stop.
func decodeError(b []byte, server string) *sdk.Error {
	e := new(sdk.Error)
	if err := json.Unmarshal(b, e); err != nil || e.Code == "" {
		return sdk.NewError(sdk.CodeContract, "transport plugin for server %q sent a malformed error frame", server)
	}
	return e
}

// transportCallbacks is the host's callback receiver for a transport
// plugin.
type transportCallbacks struct {
	headers   func(ctx context.Context, req transport.HeadersRequest) (map[string]string, error)
	challenge func(ctx context.Context, c transport.ChallengeRequest) (transport.ChallengeAnswer, error)
	timeout   time.Duration
	// challengeTimeout bounds one challenge, which may include a refresh
	// or an interactive step-up.
	challengeTimeout time.Duration
	calls            rpcx.Calls
}

// Headers answers a plugin's request for headers.
func (h *transportCallbacks) Headers(args tw.HeadersArgs[transport.HeadersRequest], reply *tw.HeadersReply) error {
	return rpcx.Run(&h.calls, &args, &reply.Headers, &reply.Err, func(ctx context.Context) (map[string]string, error) {
		ctx, cancel := context.WithTimeout(ctx, h.timeout)
		defer cancel()
		return h.headers(ctx, args.Req)
	})
}

// Challenge answers a plugin's challenge.
func (h *transportCallbacks) Challenge(args tw.ChallengeArgs[transport.ChallengeRequest], reply *tw.ChallengeReply[transport.ChallengeAnswer]) error {
	return rpcx.Run(&h.calls, &args, &reply.Answer, &reply.Err, func(ctx context.Context) (transport.ChallengeAnswer, error) {
		if h.challenge == nil {
			return transport.ChallengeAnswer{}, sdk.NewError(sdk.CodeAuth, "no auth plugin answers challenges for this server")
		}
		ctx, cancel := context.WithTimeout(ctx, h.challengeTimeout)
		defer cancel()
		a, err := h.challenge(ctx, args.Challenge)
		if err != nil {
			return transport.ChallengeAnswer{}, err
		}
		return a, nil
	})
}

// Cancel ends the context of a running callback.
func (h *transportCallbacks) Cancel(args rpcx.CancelArgs, _ *rpcx.ErrReply) error {
	h.calls.Cancel(args.ID)
	return nil
}
