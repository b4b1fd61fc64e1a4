// Package mcpgo adapts mcp-go's transports to the Hermes transport contract,
// in both directions:
//
//   - [Opener] turns any mcp-go transport.Interface (its Streamable HTTP, SSE
//     or stdio transports, or one of your own) into a transport plugin, for
//     authors who want mcp-go's transports: a plugin's main is a few lines.
//   - [Dial] is the host side: it opens a connection through a transport
//     plugin and returns it as an mcp-go transport.Interface, so that
//     client.NewClient works unchanged on top of a plugin. Request/response
//     matching happens here, in the host, once per message.
//
// This is the only package of the sdk that links mcp-go; a plugin that does
// not import it (the stdio transport) stays lean.
package mcpgo
