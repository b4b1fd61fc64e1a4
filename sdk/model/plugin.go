package model

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/rpc"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/internal/rpcx"
	"github.com/hermes-agent/hermes/sdk/internal/serve"
	mw "github.com/hermes-agent/hermes/sdk/internal/wire/modelwire"
)

// ContractVersion is the version of the model kind's contract: the host
// and a model plugin agree on it during go-plugin's handshake, and a
// plugin built for another version is refused at once with both versions
// named. docs/PLUGINS.md says what bumps it.
const ContractVersion = 1

// Serve is the whole main of a model plugin: it serves the Model open
// builds to the host and never returns; the process exits when the host is
// done with it (or dies).
func Serve(open Opener, opts ...sdk.ServeOption) {
	o := serve.Apply(sdk.KindModel, opts)
	// The host hands every plugin a message socket; a model plugin has no
	// messages besides its calls.
	serve.CloseInheritedStream()
	serve.Serve(newKind(open, o.Logger), o)
}

func init() {
	serve.InProcess[sdk.KindModel] = func(args ...any) serve.Kind { return newKind(args[0].(Opener), nil) }
}

// newKind returns the model kind for serve.Serve. log may be nil.
func newKind(open Opener, log hclog.Logger) *kind {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &kind{open: open, log: log}
}

// kind is the model kind's serve.Kind and the plugin side of its go-plugin
// glue (the host side is sdk/pluginhost's).
type kind struct {
	open Opener
	log  hclog.Logger

	servers serve.Receivers[*rpcServer]
}

func (k *kind) Name() string          { return sdk.KindModel }
func (k *kind) Version() int          { return ContractVersion }
func (k *kind) Plugin() plugin.Plugin { return k }

// Shutdown cancels the completions in flight and closes the models that
// implement io.Closer, within ctx.
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
	return nil, sdk.NewError(sdk.CodeContract, "the model plugin side has no host client; hosts use sdk/pluginhost")
}

// rpcServer is the plugin-side RPC receiver of one dispense.
type rpcServer struct {
	open   Opener
	broker *plugin.MuxBroker
	log    hclog.Logger

	mu    sync.Mutex
	m     Model
	hc    *rpcx.Client
	calls rpcx.Calls
}

// Open builds the Model.
func (s *rpcServer) Open(args mw.OpenArgs, reply *rpcx.ErrReply) error {
	return rpcx.Do(&s.calls, &args, &reply.Err, func(ctx context.Context) error {
		var cfg Config
		if err := json.Unmarshal(args.Config, &cfg); err != nil {
			return sdk.NewError(sdk.CodeContract, "model config: %v", err)
		}
		if s.open == nil {
			return sdk.NewError(sdk.CodeContract, "this plugin serves no model")
		}
		s.mu.Lock()
		opened := s.m != nil
		s.mu.Unlock()
		if opened {
			return sdk.NewError(sdk.CodeContract, "the model was already opened")
		}
		hc, err := rpcx.DialCallbacks(s.broker, args.CallbackID)
		if err != nil {
			return err
		}
		m, err := s.open(ctx, cfg)
		if err != nil {
			hc.Close()
			return err
		}
		s.mu.Lock()
		s.m, s.hc = m, hc
		s.mu.Unlock()
		serve.Started()
		return nil
	})
}

// Complete answers Model.Complete: the text goes to the host as it comes
// (all of it before the reply), a failure of the endpoint in EndpointErr.
func (s *rpcServer) Complete(args mw.CompleteArgs, reply *mw.CompleteReply) error {
	ctx, end := s.calls.Begin(args.ID, args.Deadline)
	defer end()
	s.mu.Lock()
	m, hc := s.m, s.hc
	s.mu.Unlock()
	if m == nil {
		reply.Err = sdk.NewError(sdk.CodeContract, "the model plugin was not opened")
		return nil
	}
	var req Request
	if err := json.Unmarshal(args.Request, &req); err != nil {
		reply.Err = sdk.NewError(sdk.CodeContract, "model request: %v", err)
		return nil
	}
	var relay *textRelay
	if args.Stream != 0 && hc != nil {
		relay = newTextRelay(ctx, hc, args.Stream)
		req.OnText = relay.add
	}
	res, err := m.Complete(ctx, req)
	if relay != nil {
		relay.finish()
	}
	var me *Error
	switch {
	case errors.As(err, &me):
		reply.EndpointErr, err = json.Marshal(me)
		if err != nil {
			reply.Err = sdk.NewError(sdk.CodeContract, "encode the model error: %v", err)
		}
	case err != nil:
		reply.Err = sdk.AsError(err)
	default:
		if reply.Response, err = json.Marshal(res); err != nil {
			reply.Err = sdk.NewError(sdk.CodeContract, "encode the model response: %v", err)
		}
	}
	return nil
}

// Cancel ends the context of a running call.
func (s *rpcServer) Cancel(args rpcx.CancelArgs, _ *rpcx.ErrReply) error {
	s.calls.Cancel(args.ID)
	return nil
}

func (s *rpcServer) close() {
	s.calls.CancelAll()
	s.mu.Lock()
	m, hc := s.m, s.hc
	s.mu.Unlock()
	if c, ok := m.(io.Closer); ok {
		if err := c.Close(); err != nil {
			s.log.Warn("closing the model failed", "error", err)
		}
	}
	if hc != nil {
		hc.Close()
	}
}

// textRelay hands a completion's text to the host in order, without
// holding up the stream: what arrives while a callback is under way is
// sent with the next one.
type textRelay struct {
	ctx    context.Context
	hc     *rpcx.Client
	stream uint64

	mu     sync.Mutex
	buf    strings.Builder
	failed bool // the host refused text (too much): send no more

	wake chan struct{} // text is waiting
	stop chan struct{} // closed by finish
	done chan struct{} // closed when the sender has sent everything
}

func newTextRelay(ctx context.Context, hc *rpcx.Client, stream uint64) *textRelay {
	r := &textRelay{ctx: ctx, hc: hc, stream: stream, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go r.send()
	return r
}

// add queues delta.
func (r *textRelay) add(delta string) {
	if delta == "" {
		return
	}
	r.mu.Lock()
	if !r.failed {
		r.buf.WriteString(delta)
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// take returns the text waiting and empties the buffer.
func (r *textRelay) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.buf.String()
	r.buf.Reset()
	return t
}

// send runs the callbacks, one at a time, until finish and then what is
// left.
func (r *textRelay) send() {
	defer close(r.done)
	for {
		stopping := false
		select {
		case <-r.wake:
		case <-r.stop:
			stopping = true
		}
		if t := r.take(); t != "" && r.ctx.Err() == nil {
			if err := r.hc.Call(r.ctx, mw.MethodText, &mw.TextArgs{Stream: r.stream, Text: t}, &rpcx.ErrReply{}); err != nil {
				r.mu.Lock()
				r.failed = true
				r.buf.Reset()
				r.mu.Unlock()
			}
		}
		if stopping {
			return
		}
	}
}

// finish sends what is left and waits until the host has all of it.
func (r *textRelay) finish() {
	close(r.stop)
	<-r.done
}
