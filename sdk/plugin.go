package sdk

import (
	"net/rpc"

	"github.com/hashicorp/go-plugin"
)

// TransportFactory builds the transport for one server. host lets the
// transport call back into the host (e.g. for per-request headers). The
// returned transport is started later with a context that lives as long as
// the plugin; it must not connect before Start.
type TransportFactory func(cfg TransportConfig, host Host) (Transport, error)

// Transport is what a transport plugin implements: mcp-go's
// transport.Interface. Implement transport.BidirectionalInterface as well to
// pass server-to-client requests (sampling, elicitation, roots) to the host.
type Transport = transportInterface

// TransportPlugin is the go-plugin glue of the transport kind. Plugins get it
// through ServeTransport; the host through PluginSet. Factory is nil on the
// host side.
type TransportPlugin struct {
	Factory TransportFactory
}

// Server returns the plugin-side RPC receiver.
func (p *TransportPlugin) Server(b *plugin.MuxBroker) (any, error) {
	return &transportServer{factory: p.Factory, broker: b}, nil
}

// Client returns the host-side handle, a *TransportRPC.
func (p *TransportPlugin) Client(b *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return &TransportRPC{client: c, broker: b}, nil
}

// TransportRPC is the host's handle on a dispensed transport plugin. Turn it
// into an mcp-go transport with NewTransportClient.
type TransportRPC struct {
	client *rpc.Client
	broker *plugin.MuxBroker
}

// OpenArgs is sent by the host to set up the transport.
type OpenArgs struct {
	Config   []byte // JSON TransportConfig
	StreamID uint32 // broker id of the message stream, accepted by the host
	// InheritedStream says the message stream is the socket the host
	// passed to the plugin process at start (see StreamFDEnv) instead of a
	// broker stream: one kernel socket, no multiplexer on the hot path.
	InheritedStream bool
	CallbackID      uint32 // broker id of the host's callback server
}

// OpenReply is what the plugin tells the host about its transport.
type OpenReply struct {
	// HTTP is true when the transport speaks MCP over HTTP (it then receives
	// the negotiated protocol version, and mcp-go skips stdio-only steps).
	HTTP bool
	// RequiresLegacy is true when the transport can only work with protocol
	// versions before 2026-07-28.
	RequiresLegacy bool
	// Err is set when the transport could not be built.
	Err *Error
}

// StartReply answers Start.
type StartReply struct {
	SessionID string
	Err       *Error
}

// Empty is an empty RPC argument or reply.
type Empty struct{}
