package transport

import (
	"context"
	"net/rpc"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/internal/serve"
)

// ContractVersion is the version of the transport kind's contract: the host
// and a transport plugin agree on it during go-plugin's handshake, and a
// plugin built for another version is refused at once with both versions
// named. docs/PLUGINS.md says what bumps it.
const ContractVersion = 3

// Serve is the whole main of a transport plugin: it serves the connections
// open builds to the host and never returns; the process exits when the host
// is done with it, after closing its connections gracefully.
func Serve(open Opener, opts ...sdk.ServeOption) {
	o := serve.Apply(sdk.KindTransport, opts)
	k := newKind(open, o.Logger)
	k.glue.early = startEarly(open, k.glue.log)
	serve.Serve(k, o)
}

func init() {
	serve.InProcess[sdk.KindTransport] = func(args ...any) serve.Kind { return newKind(args[0].(Opener), nil) }
}

// newKind returns the transport kind for serve.Serve. log may be nil.
func newKind(open Opener, log hclog.Logger) *kind {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &kind{glue: &glue{open: open, log: log}}
}

// kind is the transport kind's serve.Kind.
type kind struct {
	glue *glue
}

func (k *kind) Name() string                 { return sdk.KindTransport }
func (k *kind) Version() int                 { return ContractVersion }
func (k *kind) Plugin() plugin.Plugin        { return k.glue }
func (k *kind) Shutdown(ctx context.Context) { k.glue.shutdown(ctx) }

// glue is the plugin side of the go-plugin glue of the transport kind (the
// host side is sdk/pluginhost's).
type glue struct {
	open Opener
	log  hclog.Logger
	// early is the connection opened before the host asked (startEarly);
	// the first Open of its config takes it.
	early *earlyOpen

	servers []*rpcServer
}

// Server returns the plugin-side RPC receiver.
func (p *glue) Server(b *plugin.MuxBroker) (any, error) {
	s := &rpcServer{open: p.open, early: p.early, broker: b, log: p.log}
	p.servers = append(p.servers, s)
	return s, nil
}

// Client is the host's side: not served here.
func (p *glue) Client(*plugin.MuxBroker, *rpc.Client) (any, error) {
	return nil, sdk.NewError(sdk.CodeContract, "the transport plugin side has no host client; hosts use sdk/pluginhost")
}

func (p *glue) shutdown(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		for _, s := range p.servers {
			s.closeAll()
		}
		p.early.shutdown()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
