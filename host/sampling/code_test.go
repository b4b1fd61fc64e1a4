package sampling

import "github.com/hermes-agent/hermes/sdk/mcpgo/pluginconn"

// A refusal reaches the server with the code the original host sends, -1
// (REFERENCE.md §6), not the adapter's -32603.
var _ pluginconn.CodedError = (*Error)(nil)
