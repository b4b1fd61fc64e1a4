// Package transportwire is the wire of the transport kind: the frame kinds
// of the message stream and the net/rpc arguments and replies of the
// control calls (host → plugin) and of the plugin's callbacks into the
// host. Both sides use these definitions: the plugin side in sdk/transport,
// the host side in sdk/pluginhost. Value types are the public ones of
// sdk/transport, as type parameters, so that they are defined once.
package transportwire

import (
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/internal/rpcx"
)

// Frame kinds on the message stream.
const (
	// host → plugin
	FrameMessage       = 'm' // a message (seq names it for cancellation); plugin → host: a message from the server
	FrameHeaderMessage = 'M' // a message with HTTP headers: 4-byte length, header JSON, message
	FrameSyncMessage   = 'n' // a message the host waits for: answered by FrameWritten or FrameWriteError
	FrameCancel        = 'x' // abandon the exchange of message seq
	FrameVersion       = 'v' // the negotiated protocol version
	// plugin → host
	FrameWriteError = 'e' // writing message seq failed; payload: JSON *sdk.Error
	FrameWritten    = 'k' // message seq (a FrameSyncMessage) was written
	FrameClosed     = 'c' // the connection ended; payload: JSON *sdk.Error
	FrameWarning    = 'w' // something the user should know; payload: JSON *sdk.Error
	FrameSession    = 's' // the session id changed; payload: the id
)

// Control methods (host → plugin).
const (
	MethodOpen  = "Plugin.Open"
	MethodClose = "Plugin.Close"
)

// Callback methods (plugin → host).
const (
	MethodHeaders   = "Plugin.Headers"
	MethodChallenge = "Plugin.Challenge"
)

// OpenArgs is sent by the host to open a connection.
type OpenArgs struct {
	rpcx.Call
	Config []byte // JSON transport.Config
	// StreamID is the broker id of the message stream, accepted by the
	// host; unused when InheritedStream is set.
	StreamID uint32
	// InheritedStream says the message stream is the socket the host
	// passed to the plugin process at start (sdk.StreamFDEnv).
	InheritedStream bool
	// CallbackID is the broker id of the host's callback server, 0 for none.
	CallbackID uint32
}

// OpenReply is what the plugin tells the host about the connection.
type OpenReply[P any] struct {
	Properties P
	SessionID  string
	Err        *sdk.Error
}

// Failure returns the plugin's error.
func (r *OpenReply[P]) Failure() *sdk.Error { return r.Err }

// CloseArgs asks the plugin to close its connections.
type CloseArgs struct {
	rpcx.Call
	// Detach asks the plugin to answer at once, close the connection
	// gracefully on its own, and exit: the host is a one-shot command that
	// does not wait for the server's shutdown.
	Detach bool
}

// HeadersArgs asks the host for the headers of one request.
type HeadersArgs[R any] struct {
	rpcx.Call
	Req R
}

// HeadersReply carries the headers, or the reason there are none.
type HeadersReply struct {
	Headers map[string]string
	Err     *sdk.Error
}

// Failure returns the host's error.
func (r *HeadersReply) Failure() *sdk.Error { return r.Err }

// ChallengeArgs hands the host a challenge.
type ChallengeArgs[C any] struct {
	rpcx.Call
	Challenge C
}

// ChallengeReply carries the host's answer to a challenge: the answer holds
// the headers to retry with, so that a refresh is one round trip.
type ChallengeReply[A any] struct {
	Answer A
	Err    *sdk.Error
}

// Failure returns the host's error.
func (r *ChallengeReply[A]) Failure() *sdk.Error { return r.Err }
