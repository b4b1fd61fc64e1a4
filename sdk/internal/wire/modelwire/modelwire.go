// Package modelwire is the wire of the model kind: the net/rpc arguments
// and replies of the host's calls into a model plugin and of the plugin's
// text callbacks into the host. The plugin side is sdk/model, the host side
// sdk/pluginhost. Values (the Config, the Request, the Response, a model
// Error) travel as JSON: a tool's parameters are any JSON, which gob does
// not carry.
package modelwire

import (
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/internal/rpcx"
)

// Methods of the plugin (host → plugin); every one also answers
// rpcx.CancelMethod.
const (
	MethodOpen     = "Plugin.Open"
	MethodComplete = "Plugin.Complete"
)

// MethodText is the host's callback (plugin → host) that hands on the text
// of a completion as it streams in.
const MethodText = "Plugin.Text"

// OpenArgs opens the plugin's Model.
type OpenArgs struct {
	rpcx.Call
	Config []byte // JSON model.Config
	// CallbackID is the broker id of the host's text callback server.
	CallbackID uint32
}

// CompleteArgs makes one completion.
type CompleteArgs struct {
	rpcx.Call
	Request []byte // JSON model.Request
	// Stream names the completion in the text callbacks; 0: the host
	// wants no text before the answer.
	Stream uint64
}

// CompleteReply carries the answer, the endpoint's failure or the call's.
type CompleteReply struct {
	Response []byte // JSON model.Response
	// EndpointErr is the JSON model.Error of a failed call to the
	// endpoint.
	EndpointErr []byte
	Err         *sdk.Error
}

// Failure returns the plugin's error.
func (r *CompleteReply) Failure() *sdk.Error { return r.Err }

// TextArgs is text of completion Stream, in order: the plugin sends the
// next only once this one was answered.
type TextArgs struct {
	rpcx.Call
	Stream uint64
	Text   string
}
