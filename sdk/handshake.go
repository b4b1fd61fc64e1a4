package sdk

import (
	"fmt"

	"github.com/hashicorp/go-plugin"
)

// Handshake is the go-plugin handshake every Hermes plugin and the host
// share. The cookie only keeps people from running a plugin by hand; it is
// not a security measure.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "HERMES_PLUGIN",
	MagicCookieValue: "7f3c1e0a9b5d4c2e8a6f1b3d5e7c9a0b",
}

// Plugin kinds. A plugin binary is named hermes-<kind>-<name>, and the
// go-plugin plugin set it serves has one entry named after its kind.
const (
	KindTransport = "transport"
	KindAuth      = "auth"
	KindBridge    = "bridge"
)

// BinaryName returns the file name of a plugin binary of the given kind and
// name, e.g. BinaryName(KindTransport, "stdio") = "hermes-transport-stdio".
func BinaryName(kind, name string) string {
	return fmt.Sprintf("hermes-%s-%s", kind, name)
}

// PluginSet returns the go-plugin plugin set the host uses to dispense
// plugins of every kind.
func PluginSet() plugin.PluginSet {
	return plugin.PluginSet{KindTransport: &TransportPlugin{}}
}

// StreamFDEnv names the environment variable through which a host tells a
// plugin process that it inherited a connected socket for the message
// stream, and its file descriptor number. Hosts that set it pass the other
// end in ClientOptions.Stream; the plugin uses it for the first transport it
// opens. Without it, messages travel on a MuxBroker stream.
const StreamFDEnv = "HERMES_PLUGIN_STREAM_FD"
