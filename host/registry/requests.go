package registry

import "github.com/mark3labs/mcp-go/client"

// Requests are the handlers of what one server asks of the host: a
// completion (sampling), input from the person (elicitation) and the
// workspace (roots). A nil handler declines: the session does not offer
// that capability to the server.
type Requests struct {
	Sampling    client.SamplingHandler
	Elicitation client.ElicitationHandler
	Roots       client.RootsHandler
}
