// Package serve owns `hermes mcp serve`: the MCP server the host runs on
// its own stdin/stdout or on loopback HTTP for other MCP clients, whose
// tools a bridge plugin (hermes-bridge-<name>, sdk/bridge) describes and
// runs. It keeps that plugin running (started again after a crash, the
// calls in flight failing with a clear error), builds the mcp-go server
// from the plugin's description, and guards the HTTP endpoint: a bearer
// token from .env, Origin and Host checks against DNS rebinding, loopback
// only unless allowed, bounded request bodies.
//
// It does not know what the tools do; that is the plugin's. It never
// writes to the protocol stream anything but protocol.
package serve
