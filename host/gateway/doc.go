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
// The MCP engine (mcp-go's server) is touched by gateway.go, the endpoint,
// and relay.go, what the gateway asks a calling client; every other file
// speaks hermes's own values (mcpvalue).
//
// It does not start servers or read tokens itself: the registries it is
// given (Backend) do, built by the run's composition root like every other
// registry of hermes; for an auth: oauth upstream each person's registry
// has an auth plugin on that person's sealed folder, and upstreams.go only
// leads the person through the login (vault holds the key).
package gateway
