package bridge

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/rpc"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/internal/rpcx"
	"github.com/hermes-agent/hermes/sdk/internal/serve"
	bw "github.com/hermes-agent/hermes/sdk/internal/wire/bridgewire"
)

// ContractVersion is the version of the bridge kind's contract: the host
// and a bridge plugin agree on it during go-plugin's handshake, and a
// plugin built for another version is refused at once with both versions
// named. docs/PLUGINS.md says what bumps it.
const ContractVersion = 2

// Serve is the whole main of a bridge plugin: it serves desc and the
// Server open builds to the host and never returns; the process exits when
// the host is done with it.
func Serve(desc Description, open Opener, opts ...sdk.ServeOption) {
	o := serve.Apply(sdk.KindBridge, opts)
	k := newKind(desc, open, o.Logger)
	// The host hands every plugin a socket of its own at start; a bridge
	// serves its calls on it when the host asks it to at Open. Taking it
	// here keeps it from a command the plugin runs.
	k.stream.Store(serve.InheritedStream())
	serve.Serve(k, o)
}

func init() {
	// A third argument, a net.Conn, stands for the socket a plugin
	// process inherits.
	serve.InProcess[sdk.KindBridge] = func(args ...any) serve.Kind {
		k := newKind(args[0].(Description), args[1].(Opener), nil)
		if len(args) > 2 {
			k.stream.Store(args[2].(net.Conn))
		}
		return k
	}
}

// newKind returns the bridge kind for serve.Serve. log may be nil.
func newKind(desc Description, open Opener, log hclog.Logger) *kind {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &kind{desc: desc, open: open, log: log}
}

// kind is the bridge kind's serve.Kind and the plugin side of its go-plugin
// glue (the host side is sdk/pluginhost's).
type kind struct {
	desc Description
	open Opener
	log  hclog.Logger
	// stream is the socket the plugin inherited, until an Open takes it.
	stream heldConn

	servers serve.Receivers[*rpcServer]
}

// heldConn holds a connection that one taker gets.
type heldConn struct {
	mu sync.Mutex
	c  net.Conn
}

// Store keeps c (nil keeps nothing).
func (a *heldConn) Store(c net.Conn) {
	a.mu.Lock()
	a.c = c
	a.mu.Unlock()
}

// Take returns the connection, once; nil after.
func (a *heldConn) Take() net.Conn {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.c
	a.c = nil
	return c
}

func (k *kind) Name() string          { return sdk.KindBridge }
func (k *kind) Version() int          { return ContractVersion }
func (k *kind) Plugin() plugin.Plugin { return k }

// Shutdown cancels the calls in flight and closes the servers that
// implement io.Closer, within ctx.
func (k *kind) Shutdown(ctx context.Context) {
	k.servers.CloseAll(ctx, (*rpcServer).close)
}

// Server returns the plugin-side RPC receiver.
func (k *kind) Server(broker *plugin.MuxBroker) (any, error) {
	s := &rpcServer{desc: k.desc, open: k.open, log: k.log, broker: broker, stream: &k.stream}
	k.servers.Add(s)
	return s, nil
}

// Client is the host's side: not served here.
func (k *kind) Client(*plugin.MuxBroker, *rpc.Client) (any, error) {
	return nil, sdk.NewError(sdk.CodeContract, "the bridge plugin side has no host client; hosts use sdk/pluginhost")
}

// rpcServer is the plugin-side RPC receiver of one dispense.
type rpcServer struct {
	desc   Description
	open   Opener
	log    hclog.Logger
	broker *plugin.MuxBroker
	stream *heldConn // the kind's inherited socket

	mu    sync.Mutex
	srv   Server
	calls rpcx.Calls
}

// Describe answers with the plugin's Description.
func (s *rpcServer) Describe(args rpcx.Call, reply *bw.DescribeReply) error {
	return rpcx.Run(&s.calls, &args, &reply.Description, &reply.Err, func(context.Context) ([]byte, error) {
		raw, err := json.Marshal(s.desc)
		if err != nil {
			return nil, sdk.NewError(sdk.CodeContract, "encode the bridge description: %v", err)
		}
		return raw, nil
	})
}

// Open builds the Server and serves its calls on the connection the host
// asked for.
func (s *rpcServer) Open(args bw.OpenArgs, reply *bw.OpenReply) error {
	return rpcx.Do(&s.calls, &args, &reply.Err, func(ctx context.Context) error {
		onStream, err := s.openServer(ctx, args)
		reply.InheritedStream = onStream
		if err == nil {
			serve.Started()
		}
		return err
	})
}

// openServer opens the Server and starts serving calls on the inherited
// socket (then it reports true) or the broker stream args name.
func (s *rpcServer) openServer(ctx context.Context, args bw.OpenArgs) (bool, error) {
	var cfg Config
	if err := json.Unmarshal(args.Config, &cfg); err != nil {
		return false, sdk.NewError(sdk.CodeContract, "bridge config: %v", err)
	}
	if s.open == nil {
		return false, sdk.NewError(sdk.CodeContract, "this plugin serves no bridge")
	}
	s.mu.Lock()
	opened := s.srv != nil
	s.mu.Unlock()
	if opened {
		return false, sdk.NewError(sdk.CodeContract, "the bridge was already opened")
	}
	srv, err := s.open(ctx, cfg)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	// The inherited socket serves the calls when the host asked for it;
	// otherwise no one will use it.
	stream := s.stream.Take()
	if stream != nil && !args.InheritedStream {
		stream.Close()
		stream = nil
	}
	var conn io.ReadWriteCloser = stream
	if stream == nil {
		if args.Results == 0 || s.broker == nil {
			return false, nil
		}
		if conn, err = s.broker.Dial(args.Results); err != nil {
			return false, sdk.NewError(sdk.CodeClosed, "dial the results connection: %v", err)
		}
	}
	rs := rpc.NewServer()
	if err := rs.RegisterName("Plugin", s); err != nil {
		conn.Close()
		return false, sdk.NewError(sdk.CodeContract, "serve the calls' connection: %v", err)
	}
	go rs.ServeConn(conn)
	return stream != nil, nil
}

// Call answers Server.Call.
func (s *rpcServer) Call(args bw.CallArgs, reply *bw.CallReply[Result]) error {
	return rpcx.Run(&s.calls, &args, &reply.Result, &reply.Err, func(ctx context.Context) (Result, error) {
		s.mu.Lock()
		srv := s.srv
		s.mu.Unlock()
		if srv == nil {
			return Result{}, sdk.NewError(sdk.CodeContract, "the bridge was not opened")
		}
		return srv.Call(ctx, args.Name, args.Args)
	})
}

// Cancel ends the context of a running call.
func (s *rpcServer) Cancel(args rpcx.CancelArgs, _ *rpcx.ErrReply) error {
	s.calls.Cancel(args.ID)
	return nil
}

func (s *rpcServer) close() {
	s.calls.CancelAll()
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if c, ok := srv.(io.Closer); ok {
		if err := c.Close(); err != nil {
			s.log.Warn("closing the bridge failed", "error", err)
		}
	}
}
