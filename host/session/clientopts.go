package session

import (
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// clientOptions are the options of mcp-go's client for one session: the
// handlers of d that answer server requests (sampling, elicitation,
// roots, behind the adapters of requests.go), the capabilities mcp-go
// would not declare by itself, and, over HTTP, no discover bound of its
// own.
func clientOptions(d Deps, overHTTP bool) []client.ClientOption {
	var copts []client.ClientOption
	if overHTTP {
		// Over HTTP every request has its own answer, and a server that
		// does not know server/discover refuses it at once (the plugin
		// hands the host the refusal): the probe needs no bound of its
		// own beyond connect_timeout. mcp-go's 5 s bound is for stdio
		// servers that never answer; on a loaded machine it cut slow
		// answers short and sent a modern server initialize instead.
		copts = append(copts, client.WithDiscoverTimeout(-1))
	}
	// The capabilities mcp-go would not declare by itself; it fills in the
	// others from the handlers set.
	var caps mcp.ClientCapabilities
	if d.Sampling != nil {
		copts = append(copts, client.WithSamplingHandler(samplingAdapter{d.Sampling}))
		// The host's sampling converts tools and toolChoice both ways
		// (host/sampling); mcp-go declares sampling without them, and a
		// server must not send tools unless the client declares it.
		caps.Sampling = &mcp.SamplingCapability{Tools: &struct{}{}}
	}
	if d.Elicitation != nil {
		copts = append(copts, client.WithElicitationHandler(elicitationAdapter{d.Elicitation}))
		// mcp-go offers form mode only; a handler may offer URL mode.
		caps.Elicitation = elicitationCapability(d.Elicitation)
	}
	if caps.Sampling != nil || caps.Elicitation != nil {
		copts = append(copts, client.WithClientCapabilities(caps))
	}
	if d.Roots != nil {
		copts = append(copts, client.WithRootsHandler(rootsAdapter{d.Roots}))
	}
	return copts
}
