// Package pluginhost is the host's side of the Hermes plugin contract, for
// hosts; plugin authors never import this. It holds the go-plugin glue a
// host puts in its plugin sets (TransportPlugin, AuthPlugin, BridgePlugin,
// ModelPlugin), the handles Dispense returns and the clients they open
// (Transport and TransportConn, Auth and AuthClient, Bridge and
// BridgeClient, Model and ModelClient), and the handshake with each kind's
// contract version.
//
// It sits in the sdk module, next to the plugin side it speaks to, on the
// same internal wire definitions, and the two are tested together: what a
// plugin author's package shows (sdk/transport, sdk/auth, sdk/bridge,
// sdk/model) stays what an author implements and calls.
package pluginhost

import (
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/bridge"
	"github.com/hermes-agent/hermes/sdk/internal/serve"
	"github.com/hermes-agent/hermes/sdk/model"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// ContractVersion returns the contract version of a plugin kind
// (transport.ContractVersion, auth.ContractVersion,
// bridge.ContractVersion, model.ContractVersion), or 0 for an unknown kind.
func ContractVersion(kind string) int {
	switch kind {
	case sdk.KindTransport:
		return transport.ContractVersion
	case sdk.KindAuth:
		return auth.ContractVersion
	case sdk.KindBridge:
		return bridge.ContractVersion
	case sdk.KindModel:
		return model.ContractVersion
	}
	return 0
}

// Handshake returns the go-plugin handshake for a plugin of kind: the
// cookie every Hermes plugin shares, and the kind's contract version.
func Handshake(kind string) plugin.HandshakeConfig {
	return serve.Handshake(ContractVersion(kind))
}

// VersionedPlugins returns go-plugin's versioned plugin sets for a plugin
// serving the given kinds (one, in practice): each kind's glue under its
// own contract version. Pass it as ClientConfig.VersionedPlugins, with
// Handshake of the kind.
func VersionedPlugins(kinds map[string]plugin.Plugin) map[int]plugin.PluginSet {
	sets := map[int]plugin.PluginSet{}
	for k, p := range kinds {
		v := ContractVersion(k)
		if sets[v] == nil {
			sets[v] = plugin.PluginSet{}
		}
		sets[v][k] = p
	}
	return sets
}

// MagicCookieKey is the environment variable of the handshake cookie.
const MagicCookieKey = "HERMES_PLUGIN"
