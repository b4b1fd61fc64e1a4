package auth

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
	aw "github.com/hermes-agent/hermes/sdk/internal/wire/authwire"
)

// ContractVersion is the version of the auth kind's contract: the host and
// an auth plugin agree on it during go-plugin's handshake, and a plugin
// built for another version is refused at once with both versions named.
// docs/PLUGINS.md says what bumps it.
const ContractVersion = 3

// Serve is the whole main of an auth plugin: it serves the Authenticator
// open builds to the host and never returns; the process exits when the
// host is done with it.
func Serve(open Opener, opts ...sdk.ServeOption) {
	o := serve.Apply(sdk.KindAuth, opts)
	// The host hands every plugin a message socket; an auth plugin has no
	// messages, and a command it runs must not inherit the socket.
	serve.CloseInheritedStream()
	serve.Serve(newKind(open, o.Logger), o)
}

func init() {
	serve.InProcess[sdk.KindAuth] = func(args ...any) serve.Kind { return newKind(args[0].(Opener), nil) }
}

// newKind returns the auth kind for serve.Serve. log may be nil.
func newKind(open Opener, log hclog.Logger) *kind {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &kind{open: open, log: log}
}

// kind is the auth kind's serve.Kind and the plugin side of its go-plugin
// glue (the host side is sdk/pluginhost's).
type kind struct {
	open Opener
	log  hclog.Logger

	servers serve.Receivers[*rpcServer]
}

func (k *kind) Name() string          { return sdk.KindAuth }
func (k *kind) Version() int          { return ContractVersion }
func (k *kind) Plugin() plugin.Plugin { return k }

// Shutdown closes the authenticators that implement io.Closer.
func (k *kind) Shutdown(ctx context.Context) {
	k.servers.CloseAll(ctx, (*rpcServer).close)
}

// Server returns the plugin-side RPC receiver.
func (k *kind) Server(b *plugin.MuxBroker) (any, error) {
	s := &rpcServer{open: k.open, broker: b, log: k.log}
	k.servers.Add(s)
	return s, nil
}

// Client is the host's side: not served here.
func (k *kind) Client(*plugin.MuxBroker, *rpc.Client) (any, error) {
	return nil, sdk.NewError(sdk.CodeContract, "the auth plugin side has no host client; hosts use sdk/pluginhost")
}

// rpcServer is the plugin-side RPC receiver of one dispense.
type rpcServer struct {
	open   Opener
	broker *plugin.MuxBroker
	log    hclog.Logger

	mu    sync.Mutex
	a     Authenticator
	hc    *rpcx.Client
	calls rpcx.Calls
}

// authn returns the opened Authenticator, or one that fails every call.
func (s *rpcServer) authn() Authenticator {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.a == nil {
		return notOpened{}
	}
	return s.a
}

// ui is the host's UI for a call: a relay when a user is behind it.
func (s *rpcServer) ui(c rpcx.Call) UI {
	s.mu.Lock()
	hc := s.hc
	s.mu.Unlock()
	if !c.Interactive || hc == nil {
		return NoUI{}
	}
	return &remoteUI{hc: hc}
}

// Open builds the Authenticator.
func (s *rpcServer) Open(args aw.OpenArgs, reply *aw.OpenReply) error {
	return rpcx.Do(&s.calls, &args, &reply.Err, func(ctx context.Context) error {
		var cfg Config
		if err := json.Unmarshal(args.Config, &cfg); err != nil {
			return sdk.NewError(sdk.CodeContract, "auth config: %v", err)
		}
		if s.open == nil {
			return sdk.NewError(sdk.CodeContract, "this plugin serves no auth method")
		}
		hc, err := rpcx.DialCallbacks(s.broker, args.CallbackID)
		if err != nil {
			return err
		}
		a, err := s.open(ctx, cfg)
		if err != nil {
			hc.Close()
			return err
		}
		s.mu.Lock()
		s.a, s.hc = a, hc
		s.mu.Unlock()
		if sl, ok := a.(Sealer); ok && cfg.Seal != nil {
			reply.Sealed = sl.Sealed()
		}
		serve.Started()
		return nil
	})
}

// Headers answers Authenticator.Headers.
func (s *rpcServer) Headers(args aw.HeadersArgs[HeadersRequest], reply *aw.HeadersReply[Headers]) error {
	return rpcx.Run(&s.calls, &args, &reply.Headers, &reply.Err, func(ctx context.Context) (Headers, error) { return s.authn().Headers(ctx, args.Req) })
}

// Challenge answers Authenticator.Challenge.
func (s *rpcServer) Challenge(args aw.ChallengeArgs[Challenge], reply *aw.ChallengeReply[Answer]) error {
	return rpcx.Run(&s.calls, &args, &reply.Answer, &reply.Err, func(ctx context.Context) (Answer, error) {
		return s.authn().Challenge(ctx, args.Challenge, s.ui(args.Call))
	})
}

// Login answers Authenticator.Login.
func (s *rpcServer) Login(args aw.LoginArgs[LoginOptions], reply *aw.StatusReply[Status]) error {
	return rpcx.Run(&s.calls, &args, &reply.Status, &reply.Err, func(ctx context.Context) (Status, error) { return s.authn().Login(ctx, args.Options, s.ui(args.Call)) })
}

// Logout answers Authenticator.Logout.
func (s *rpcServer) Logout(args rpcx.Call, reply *aw.LogoutReply[LogoutResult]) error {
	return rpcx.Run(&s.calls, &args, &reply.Result, &reply.Err, s.authn().Logout)
}

// Status answers Authenticator.Status.
func (s *rpcServer) Status(args rpcx.Call, reply *aw.StatusReply[Status]) error {
	return rpcx.Run(&s.calls, &args, &reply.Status, &reply.Err, s.authn().Status)
}

// Cancel ends the context of a running call.
func (s *rpcServer) Cancel(args rpcx.CancelArgs, _ *rpcx.ErrReply) error {
	s.calls.Cancel(args.ID)
	return nil
}

func (s *rpcServer) close() {
	s.calls.CancelAll()
	s.mu.Lock()
	a, hc := s.a, s.hc
	s.mu.Unlock()
	if c, ok := a.(io.Closer); ok {
		if err := c.Close(); err != nil {
			s.log.Warn("closing the authenticator failed", "error", err)
		}
	}
	if hc != nil {
		hc.Close()
	}
}

// notOpened is the Authenticator of a plugin the host did not open.
type notOpened struct{}

func (notOpened) err() error { return sdk.NewError(sdk.CodeContract, "the auth plugin was not opened") }
func (n notOpened) Headers(context.Context, HeadersRequest) (Headers, error) {
	return Headers{}, n.err()
}
func (n notOpened) Challenge(context.Context, Challenge, UI) (Answer, error) {
	return Answer{}, n.err()
}
func (n notOpened) Login(context.Context, LoginOptions, UI) (Status, error) {
	return Status{}, n.err()
}
func (n notOpened) Logout(context.Context) (LogoutResult, error) { return LogoutResult{}, n.err() }
func (n notOpened) Status(context.Context) (Status, error)       { return Status{}, n.err() }

// fromUIError is the error a UI callback answered with.
func fromUIError(err error) error {
	switch sdk.ErrorCode(err) {
	case aw.CodeNotInteractive:
		return ErrNotInteractive
	case aw.CodeNoBrowser:
		return ErrNoBrowser
	}
	return err
}

// remoteUI is the plugin's view of the host's UI.
type remoteUI struct {
	hc *rpcx.Client
}

func (u *remoteUI) Interactive() bool { return true }

func (u *remoteUI) OpenURL(ctx context.Context, url string) error {
	return fromUIError(u.hc.Call(ctx, aw.MethodOpenURL, &aw.URLArgs{URL: url}, &rpcx.ErrReply{}))
}

func (u *remoteUI) Show(ctx context.Context, n Notice) error {
	return fromUIError(u.hc.Call(ctx, aw.MethodShow, &aw.NoticeArgs[Notice]{Notice: n}, &rpcx.ErrReply{}))
}

// Ask waits for the user's line; when ctx ends first, the host's prompt is
// ended too (the call is cancelled on the host's side).
func (u *remoteUI) Ask(ctx context.Context, prompt string) (string, error) {
	var reply aw.AskReply
	err := u.hc.Call(ctx, aw.MethodAsk, &aw.AskArgs{Prompt: prompt}, &reply)
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	return reply.Line, fromUIError(err)
}
