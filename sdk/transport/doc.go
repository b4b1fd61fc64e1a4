// Package transport is the transport kind of the Hermes plugin contract: a
// transport plugin moves JSON-RPC messages, as raw bytes, between the host
// and one MCP server. It is the shape of the official MCP Go SDK's
// Transport/Connection and of MCP's own definition of a transport: the host
// writes messages, the plugin delivers what the server sends (responses,
// notifications, the server's own requests), plus cancellation, a session id
// and "the connection ended (reason)". Request/response matching,
// initialize, capabilities and every other protocol decision are the host's.
//
// # Writing a transport plugin
//
// Implement [Conn] and serve an [Opener] that connects it:
//
//	func main() {
//		transport.Serve(func(ctx context.Context, cfg transport.Config, host transport.Host) (transport.Conn, error) {
//			return dial(ctx, cfg)
//		})
//	}
//
// Build the binary as hermes-transport-<name> and put it on the plugin search
// path (beside hermes, in $HERMES_HOME/plugins, or $HERMES_PLUGIN_PATH); a
// server entry with `transport: <name>` then uses it. Authors who want one of
// mcp-go's own transports use the adapter module
// github.com/hermes-agent/hermes/sdk/mcpgo instead. sdktest.CheckTransport
// runs the built binary through the whole contract.
//
// Errors reach the host with their kind when they are (or wrap) an
// [*sdk.Error]: classify what happened on the wire (sdk.CodeAuth with the
// HTTP status and challenge, sdk.CodeSessionExpired, sdk.CodeTimeout...); the
// host reacts to the code.
//
// # How messages travel
//
// Control calls (Open, Close) use go-plugin's net/rpc. Messages travel as
// length-prefixed binary frames on a socket the plugin process inherited
// from the host (a go-plugin broker stream when there is none), one message
// per frame, never re-encoded. A host-side cancel is a frame on the same
// ordered stream, so it can never overtake the request it cancels.
// Plugin-to-host calls (Host: per-request headers, challenges) go through a
// net/rpc callback server the host runs on the broker; a challenge's answer
// carries the headers to retry with.
//
// This package and the sdk root depend on go-plugin and hclog only.
package transport
