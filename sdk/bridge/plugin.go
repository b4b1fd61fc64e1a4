package bridge

import (
	"context"
	"encoding/json"
	"io"
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
	// The host hands every plugin a message socket; a bridge has no
	// messages besides its calls.
	serve.CloseInheritedStream()
	serve.Serve(newKind(desc, open, o.Logger), o)
}

func init() {
	serve.InProcess[sdk.KindBridge] = func(args ...any) serve.Kind {
		return newKind(args[0].(Description), args[1].(Opener), nil)
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

	servers serve.Receivers[*rpcServer]
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
	s := &rpcServer{desc: k.desc, open: k.open, log: k.log, broker: broker}
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

// Open builds the Server.
func (s *rpcServer) Open(args bw.OpenArgs, reply *rpcx.ErrReply) error {
	return rpcx.Do(&s.calls, &args, &reply.Err, func(ctx context.Context) error { return s.openServer(ctx, args) })
}

func (s *rpcServer) openServer(ctx context.Context, args bw.OpenArgs) error {
	var cfg Config
	if err := json.Unmarshal(args.Config, &cfg); err != nil {
		return sdk.NewError(sdk.CodeContract, "bridge config: %v", err)
	}
	if s.open == nil {
		return sdk.NewError(sdk.CodeContract, "this plugin serves no bridge")
	}
	s.mu.Lock()
	opened := s.srv != nil
	s.mu.Unlock()
	if opened {
		return sdk.NewError(sdk.CodeContract, "the bridge was already opened")
	}
	srv, err := s.open(ctx, cfg)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	if args.Results != 0 && s.broker != nil {
		conn, err := s.broker.Dial(args.Results)
		if err != nil {
			return sdk.NewError(sdk.CodeClosed, "dial the results connection: %v", err)
		}
		rs := rpc.NewServer()
		if err := rs.RegisterName("Plugin", s); err != nil {
			conn.Close()
			return sdk.NewError(sdk.CodeContract, "serve the results connection: %v", err)
		}
		go rs.ServeConn(conn)
	}
	return nil
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
