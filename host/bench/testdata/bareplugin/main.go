// Command bareplugin is the floor of the plugin benchmarks: the smallest
// go-plugin net/rpc plugin, with one trivial method and nothing else (no sdk,
// no message stream, no host watch). The benchmarks build it with the same
// toolchain as the real plugins, under the name hermes-bench-bare, and start
// it through the same supervisor, so that only the binary differs.
//
// The handshake is the host's: the benchmark sets the cookie and the
// contract version at link time (-X), so this program does not link the sdk.
package main

import (
	"net/rpc"
	"strconv"

	"github.com/hashicorp/go-plugin"
)

// Set with -ldflags -X by the benchmark that builds this program.
var (
	cookieKey       = "HERMES_PLUGIN"
	cookieValue     = ""
	protocolVersion = "0"
	kind            = "bench"
)

// Bare is the plugin's one net/rpc receiver.
type Bare struct{}

// Ping answers "pong".
func (Bare) Ping(_ string, reply *string) error {
	*reply = "pong"
	return nil
}

// barePlugin is the go-plugin glue; only its Server side runs here.
type barePlugin struct{}

func (barePlugin) Server(*plugin.MuxBroker) (any, error) { return Bare{}, nil }

func (barePlugin) Client(_ *plugin.MuxBroker, c *rpc.Client) (any, error) { return c, nil }

func main() {
	v, _ := strconv.Atoi(protocolVersion)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: plugin.HandshakeConfig{
			ProtocolVersion:  uint(v),
			MagicCookieKey:   cookieKey,
			MagicCookieValue: cookieValue,
		},
		VersionedPlugins: map[int]plugin.PluginSet{v: {kind: barePlugin{}}},
	})
}
