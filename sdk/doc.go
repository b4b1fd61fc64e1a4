// Package sdk is the kind-neutral root of the contract between the Hermes
// host and its plugins: the go-plugin handshake and the contract version
// (refused at once when the two sides differ), the plugin kinds and binary
// names, errors that keep their kind across the process boundary, the host
// callback plumbing, the plugin logger, and Serve with parent-death
// handling (a plugin exits when its host dies, after closing what it opened
// within a grace, and never leaves a server behind).
//
// Each kind's contract lives in its own small package: [transport] for
// transports (moving JSON-RPC messages as bytes), and auth and bridge as
// they come. Plugin authors call their kind package's Serve. The package
// mcpgo adapts mcp-go's transports to the contract for authors who want
// them; sdktest runs a plugin binary through the contract in a test.
//
// This package and the kind packages depend on go-plugin and hclog only.
//
// [transport]: https://pkg.go.dev/github.com/hermes-agent/hermes/sdk/transport
package sdk
