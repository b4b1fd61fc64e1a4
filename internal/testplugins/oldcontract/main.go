// Command hermes-transport-oldcontract is a test plugin built for plugin
// contract v1: the Hermes handshake cookie with the old protocol version and
// a transport that answers nothing. The host must refuse it at once, naming
// both versions, and never hang on it.
package main

import (
	"net/rpc"

	"github.com/hashicorp/go-plugin"
)

type oldTransport struct{}

func (oldTransport) Server(*plugin.MuxBroker) (any, error)              { return &struct{}{}, nil }
func (oldTransport) Client(*plugin.MuxBroker, *rpc.Client) (any, error) { return nil, nil }

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: plugin.HandshakeConfig{
			ProtocolVersion:  1,
			MagicCookieKey:   "HERMES_PLUGIN",
			MagicCookieValue: "7f3c1e0a9b5d4c2e8a6f1b3d5e7c9a0b",
		},
		Plugins: plugin.PluginSet{"transport": oldTransport{}},
	})
}
