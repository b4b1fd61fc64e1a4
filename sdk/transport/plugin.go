package transport

import (
	"context"
	"net/rpc"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
)

// Frame kinds on the message stream.
const (
	// host → plugin
	frameMessage       = 'm' // a message (seq names it for cancellation); plugin → host: a message from the server
	frameHeaderMessage = 'M' // a message with HTTP headers: 4-byte length, header JSON, message
	frameSyncMessage   = 'n' // a message the host waits for: answered by frameWritten or frameWriteError
	frameCancel        = 'x' // abandon the exchange of message seq
	frameVersion       = 'v' // the negotiated protocol version
	// plugin → host
	frameWriteError = 'e' // writing message seq failed; payload: JSON *sdk.Error
	frameWritten    = 'k' // message seq (a frameSyncMessage) was written
	frameClosed     = 'c' // the connection ended; payload: JSON *sdk.Error
	frameWarning    = 'w' // something the user should know; payload: JSON *sdk.Error
	frameSession    = 's' // the session id changed; payload: the id
)

// Serve is the whole main of a transport plugin: it serves the connections
// open builds to the host and never returns; the process exits when the host
// is done with it, after closing its connections gracefully.
func Serve(open Opener, opts ...sdk.ServeOptions) {
	var o sdk.ServeOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Logger == nil {
		o.Logger = sdk.NewPluginLogger(sdk.KindTransport)
	}
	sdk.Serve(NewKind(open, o.Logger), o)
}

// NewKind returns the transport kind for sdk.Serve, or for an in-process
// test with go-plugin's test helpers. log may be nil.
func NewKind(open Opener, log hclog.Logger) *Kind {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Kind{glue: &Plugin{Open: open, log: log}}
}

// Kind is the transport kind's sdk.Kind.
type Kind struct {
	glue *Plugin
}

// Name returns sdk.KindTransport.
func (k *Kind) Name() string { return sdk.KindTransport }

// Plugin returns the go-plugin glue.
func (k *Kind) Plugin() plugin.Plugin { return k.glue }

// Shutdown closes every open connection, gracefully, within ctx.
func (k *Kind) Shutdown(ctx context.Context) { k.glue.shutdown(ctx) }

// Plugin is the go-plugin glue of the transport kind. Plugins get it through
// Serve; the host uses a zero Plugin in its plugin set and gets a *Handle
// from Dispense.
type Plugin struct {
	// Open connects; nil on the host side.
	Open Opener
	log  hclog.Logger

	servers []*rpcServer
}

// Server returns the plugin-side RPC receiver.
func (p *Plugin) Server(b *plugin.MuxBroker) (any, error) {
	log := p.log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	s := &rpcServer{open: p.Open, broker: b, log: log}
	p.servers = append(p.servers, s)
	return s, nil
}

// Client returns the host-side handle, a *Handle.
func (p *Plugin) Client(b *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return &Handle{client: c, broker: b}, nil
}

func (p *Plugin) shutdown(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		for _, s := range p.servers {
			s.closeAll()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Handle is the host's handle on a dispensed transport plugin; Open a
// connection with it.
type Handle struct {
	client *rpc.Client
	broker *plugin.MuxBroker
}

// OpenArgs is sent by the host to open a connection.
type OpenArgs struct {
	Config []byte // JSON Config
	// StreamID is the broker id of the message stream, accepted by the
	// host; unused when InheritedStream is set.
	StreamID uint32
	// InheritedStream says the message stream is the socket the host
	// passed to the plugin process at start (sdk.StreamFDEnv).
	InheritedStream bool
	// CallbackID is the broker id of the host's callback server, 0 for none.
	CallbackID uint32
}

// OpenReply is what the plugin tells the host about the connection.
type OpenReply struct {
	Properties Properties
	SessionID  string
	Err        *sdk.Error
}

// CloseArgs asks the plugin to close its connection.
type CloseArgs struct {
	// Detach asks the plugin to answer at once, close the connection
	// gracefully on its own, and exit: the host is a one-shot command that
	// does not wait for the server's shutdown.
	Detach bool
}

// Empty is an empty RPC argument or reply.
type Empty struct{}

// HeadersReply carries the headers of a Headers callback, or the reason
// there are none.
type HeadersReply struct {
	Headers map[string]string
	Err     *sdk.Error
}

// ChallengeReply carries the host's answer to a challenge.
type ChallengeReply struct {
	Retry bool
	Err   *sdk.Error
}

// hostCallbacks is the host's callback receiver for a transport plugin.
type hostCallbacks struct {
	headers   func(ctx context.Context, req HeadersRequest) (map[string]string, error)
	challenge func(ctx context.Context, c ChallengeRequest) (bool, error)
	timeout   time.Duration
	// challengeTimeout bounds one challenge, which may include a refresh
	// or an interactive step-up.
	challengeTimeout time.Duration
}

// Challenge answers a plugin's challenge callback.
func (h *hostCallbacks) Challenge(req ChallengeRequest, reply *ChallengeReply) error {
	if h.challenge == nil {
		reply.Err = sdk.NewError(sdk.CodeAuth, "no auth plugin answers challenges for this server")
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.challengeTimeout)
	defer cancel()
	retry, err := h.challenge(ctx, req)
	reply.Retry = retry && err == nil
	reply.Err = sdk.AsError(err)
	return nil
}

// Headers answers a plugin's request for headers.
func (h *hostCallbacks) Headers(req HeadersRequest, reply *HeadersReply) error {
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	hs, err := h.headers(ctx, req)
	reply.Headers = hs
	reply.Err = sdk.AsError(err)
	return nil
}
