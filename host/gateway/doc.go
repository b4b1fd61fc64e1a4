// Package gateway owns the MCP endpoint of 'hermes mcp gateway': the
// registry's tools, resources, prompts and completions served to many
// people as one MCP server over streamable HTTP (catalog.go names and
// routes what is not a tool). Each request's person is identified before the MCP
// layer sees it (an Options.Authenticate middleware, the identity
// package's), every list a person sees is filtered and every call gated by
// one decision (Options.Decide, the policy package's), and the sessions of
// the 2025-11-25 revision carry ids that any replica holding the
// deployment's key accepts (sessionid.go), so replicas share nothing. A
// call reaches its upstream with what is the caller's (relay.go): the
// upstream's sampling and elicitation requests relayed to the client that
// made the call, its progress, its cancellation and its trace context.
//
// It does not start servers or hold credentials: the registry it is given
// (Backend) does, built by the run's composition root like every other
// registry of hermes.
package gateway
