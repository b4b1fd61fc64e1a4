package sdk

import (
	"fmt"

	"github.com/hashicorp/go-plugin"
)

// ContractVersion is the version of the plugin contract this sdk speaks. The
// host and a plugin agree on it during go-plugin's handshake (versioned
// plugin sets); a plugin built for another version is refused at once with
// both versions named. Bump it whenever a kind's wire contract changes in a
// way an older plugin or host would misread.
const ContractVersion = 2

// Handshake is the go-plugin handshake every Hermes plugin and the host
// share. The cookie only keeps people from running a plugin by hand; it is
// not a security measure.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ContractVersion,
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

// VersionedPlugins returns the go-plugin versioned plugin sets for this
// contract version, holding the given kinds' glue keyed by kind name. Hosts
// pass it as ClientConfig.VersionedPlugins; Serve uses it for plugins.
func VersionedPlugins(kinds map[string]plugin.Plugin) map[int]plugin.PluginSet {
	set := plugin.PluginSet{}
	for k, p := range kinds {
		set[k] = p
	}
	return map[int]plugin.PluginSet{ContractVersion: set}
}

// StreamFDEnv names the environment variable through which a host tells a
// plugin process that it inherited a connected socket for the message
// stream, and its file descriptor number. Without it, messages travel on a
// go-plugin MuxBroker stream.
const StreamFDEnv = "HERMES_PLUGIN_STREAM_FD"
