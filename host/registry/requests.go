package registry

import "github.com/hermes-agent/hermes/host/session"

// Requests are the handlers of what one server asks of the host: a
// completion (sampling), input from the person (elicitation) and the
// workspace (roots). A nil handler declines: the session does not offer
// that capability to the server.
type Requests struct {
	Sampling    session.Sampler
	Elicitation session.Elicitor
	Roots       session.RootsLister
}
