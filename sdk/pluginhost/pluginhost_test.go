package pluginhost

import (
	"testing"

	goplugin "github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/internal/serve"
)

// Each kind's handshake carries its own contract version, and the plugin
// sets a host builds put each kind under its own: a bump of one kind does
// not refuse another's plugins.
func TestHandshakePerKind(t *testing.T) {
	if MagicCookieKey != serve.MagicCookieKey {
		t.Fatal("the cookie's name disagrees with the plugin side's")
	}
	for _, k := range []string{sdk.KindTransport, sdk.KindAuth, sdk.KindBridge} {
		h := Handshake(k)
		if int(h.ProtocolVersion) != ContractVersion(k) || h.MagicCookieKey != MagicCookieKey || ContractVersion(k) == 0 {
			t.Errorf("%s: handshake %+v, contract v%d", k, h, ContractVersion(k))
		}
		sets := VersionedPlugins(map[string]goplugin.Plugin{k: TransportPlugin{}})
		if _, ok := sets[ContractVersion(k)][k]; !ok || len(sets) != 1 {
			t.Errorf("%s: plugin sets %v", k, sets)
		}
	}
}
