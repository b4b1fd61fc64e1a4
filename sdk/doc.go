// Package sdk is the contract between the Hermes host and its plugins, for
// everyone who writes one: the go-plugin handshake, the plugin kinds, the
// transport contract and the glue that carries it across the process
// boundary, and one-call Serve helpers for a plugin's main.
//
// # Writing a transport plugin
//
// A transport plugin moves JSON-RPC messages between the host and one MCP
// server. Implement mcp-go's transport.Interface (and
// transport.BidirectionalInterface if the server may send requests such as
// sampling, elicitation or roots), then serve it:
//
//	func main() {
//		sdk.ServeTransport(func(cfg sdk.TransportConfig, host sdk.Host) (transport.Interface, error) {
//			return newMyTransport(cfg), nil
//		})
//	}
//
// Build the binary as hermes-transport-<name> and put it on the plugin search
// path (beside hermes, in $HERMES_HOME/plugins, or $HERMES_PLUGIN_PATH); a
// server entry with `transport: <name>` then uses it. The host owns the MCP
// session (initialize, capabilities, pagination, handlers): the plugin only
// moves messages. Optional interfaces a transport may implement:
//
//   - [Watched]: report that the connection ended on its own (the server
//     exited, the stream broke) so the host reconnects at once.
//   - transport.HTTPConnection: receive the negotiated protocol version.
//   - RequiresLegacyProtocol() bool: force the pre-2026-07-28 protocol.
//
// Errors returned by the transport reach the host with their kind intact when
// they are (or wrap) an [*Error]; use [NewError] with one of the Code
// constants, e.g. CodeAuth with the HTTP status and WWW-Authenticate header.
//
// # How messages travel
//
// Control calls (Open, Start, Close) use go-plugin's net/rpc. JSON-RPC
// messages do not: they travel as newline-delimited frames over one raw
// stream of the go-plugin MuxBroker, in both directions, which costs a
// fraction of a net/rpc call per message. Requests carry a sequence number;
// a host-side cancel or timeout sends a cancel frame so the plugin abandons
// the call (the host's MCP client also sends notifications/cancelled to the
// server). Plugin-to-host calls that are not MCP traffic, such as asking for
// per-request headers, go through a net/rpc callback server the host runs on
// the broker.
//
// A plugin process exits when its host dies: the host starts it with a
// parent-death signal, and the Serve helpers also watch the parent process.
package sdk
