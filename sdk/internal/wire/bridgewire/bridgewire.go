// Package bridgewire is the wire of the bridge kind: the net/rpc arguments
// and replies of the host's calls into a bridge plugin. The plugin side is
// sdk/bridge, the host side sdk/pluginhost; value types are sdk/bridge's,
// as type parameters. Tool calls and their results travel on a connection
// of their own, read by the host with a bound on each reply: the socket the
// plugin inherited at start (OpenArgs.InheritedStream, when the plugin
// takes it: OpenReply.InheritedStream), or else a broker stream
// (OpenArgs.Results).
package bridgewire

import (
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/internal/rpcx"
)

// Methods of the plugin; every one also answers rpcx.CancelMethod.
const (
	MethodDescribe = "Plugin.Describe"
	MethodOpen     = "Plugin.Open"
	MethodCall     = "Plugin.Call"
)

// DescribeReply carries the bridge.Description as JSON.
type DescribeReply struct {
	Description []byte
	Err         *sdk.Error
}

// Failure returns the plugin's error.
func (r *DescribeReply) Failure() *sdk.Error { return r.Err }

// OpenArgs opens the plugin's Server.
type OpenArgs struct {
	rpcx.Call
	Config []byte // JSON bridge.Config
	// Results is the broker stream the plugin dials and serves its calls
	// on; 0 serves them on the control connection.
	Results uint32
	// InheritedStream asks the plugin to serve its calls on the socket it
	// inherited at start (sdk.StreamFDEnv) instead, without go-plugin's
	// multiplexer: fewer hand-offs per call. A plugin that does says so in
	// OpenReply.InheritedStream and does not dial Results; one that does
	// not know the field ignores it and dials Results, so neither side's
	// contract version moved with it.
	InheritedStream bool
}

// OpenReply answers Open.
type OpenReply struct {
	Err *sdk.Error
	// InheritedStream is set when the plugin serves its calls on the
	// socket it inherited (OpenArgs.InheritedStream); a plugin that does
	// not know the field leaves it false.
	InheritedStream bool
}

// Failure returns the plugin's error.
func (r *OpenReply) Failure() *sdk.Error { return r.Err }

// CallArgs runs one tool.
type CallArgs struct {
	rpcx.Call
	Name string
	Args []byte
}

// CallReply carries a tool's result or the call's error.
type CallReply[R any] struct {
	Result R
	Err    *sdk.Error
}

// Failure returns the plugin's error.
func (r *CallReply[R]) Failure() *sdk.Error { return r.Err }
