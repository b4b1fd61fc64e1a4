// Package bridge is the contract of bridge plugins (hermes-bridge-<name>):
// a set of tools over some of the agent's own data that `hermes mcp serve`
// offers to other MCP clients. The host runs the MCP server (stdio or
// HTTP, its authentication, the protocol); the plugin only describes its
// tools and runs a call when asked. A plugin implements Server in one small
// main and calls Serve (the host's side is sdk/pluginhost: it asks for the
// Description, checks it, and opens the Server over the agent's home
// folder).
//
// A call may be long (a wait for the next event): the host cancels it with
// its context, and the plugin's context ends too. A plugin that crashes
// fails the calls in flight with a CodeClosed error; the host starts it
// again.
//
// This package depends on go-plugin, hclog and the sdk root only.
package bridge
