// Package bridgewire is the wire of the bridge kind: the net/rpc arguments
// and replies of the host's calls into a bridge plugin. The plugin side is
// sdk/bridge, the host side sdk/pluginhost; value types are sdk/bridge's,
// as type parameters. Tool results travel on a broker stream of their own
// (OpenArgs.Results), read by the host with a bound on each reply.
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
}

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
