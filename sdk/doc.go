// Package sdk is the kind-neutral root of the contract between the Hermes
// host and its plugins, for plugin authors: errors that keep their kind
// across the process boundary (Error and its codes), the plugin kinds and
// binary names, the options every kind's Serve takes (WithLogger, ...), the
// plugin logger, and how a process ended (ExitReason).
//
// Each kind's contract lives in its own small package, with its own
// contract version: [transport] (moving JSON-RPC messages as bytes),
// [auth] (request headers for a server that wants credentials),
// [bridge] (tools over the agent's data for `hermes mcp serve`) and
// [model] (a chat completion of a model endpoint, for `hermes chat`). A plugin
// author imports the root and one kind package, and calls that kind's
// Serve. sdktest checks a plugin of any kind in a test; the mcp-go adapter
// for transports is the module github.com/hermes-agent/hermes/sdk/mcpgo.
// The host's side of the contract is sdk/pluginhost, which plugin authors
// never import.
//
// This module depends on go-plugin and hclog only (no mcp-go). Its version
// is Version, tagged sdk/v<Version>; docs/PLUGINS.md says what bumps it and
// each kind's contract version.
//
// [transport]: https://pkg.go.dev/github.com/hermes-agent/hermes/sdk/transport
// [auth]: https://pkg.go.dev/github.com/hermes-agent/hermes/sdk/auth
// [bridge]: https://pkg.go.dev/github.com/hermes-agent/hermes/sdk/bridge
// [model]: https://pkg.go.dev/github.com/hermes-agent/hermes/sdk/model
package sdk
