// Package mcpgo turns mcp-go's transports into Hermes transport plugins,
// for authors who want them: [Opener] takes a factory of any mcp-go
// transport.Interface (its Streamable HTTP, SSE or stdio transports, or one
// of your own), and a plugin's main is a few lines.
//
// It is a module of its own (github.com/hermes-agent/hermes/sdk/mcpgo), so
// that the sdk module, which every plugin imports, requires neither mcp-go
// nor anything that pulls it in. Its reference subpackage is the mcp-go
// reference server for tests of HTTP transports.
package mcpgo
