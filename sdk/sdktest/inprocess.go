package sdktest

import (
	"context"
	"net/rpc"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/bridge"
	"github.com/hermes-agent/hermes/sdk/internal/serve"
	"github.com/hermes-agent/hermes/sdk/model"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// joined is go-plugin glue whose plugin side is a kind's and whose host
// side is sdk/pluginhost's, for go-plugin's in-process test connection.
type joined struct {
	server, client plugin.Plugin
}

func (j joined) Server(b *plugin.MuxBroker) (any, error) { return j.server.Server(b) }
func (j joined) Client(b *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return j.client.Client(b, c)
}

// inProcess serves the kind built from args over go-plugin's in-process
// test connection and returns what the host dispenses. The connection
// closes when the test ends.
func inProcess(t testing.TB, kind string, host plugin.Plugin, args ...any) any {
	t.Helper()
	k := serve.InProcess[kind](args...)
	client, _ := plugin.TestPluginRPCConn(t, map[string]plugin.Plugin{kind: joined{k.Plugin(), host}}, nil)
	t.Cleanup(func() { client.Close() })
	// Cleanups run last first: the plugin side closes what it opened (as
	// it does when its host goes), then the connection closes.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		k.Shutdown(ctx)
	})
	raw, err := client.Dispense(kind)
	if err != nil {
		t.Fatalf("dispense the %s plugin in-process: %v", kind, err)
	}
	return raw
}

// TransportInProcess serves open in this process, as transport.Serve would
// in a plugin's, and returns the host's handle on it: a unit test of a Conn
// without building a binary. CheckTransport tests the built binary.
func TransportInProcess(t testing.TB, open transport.Opener) *pluginhost.Transport {
	t.Helper()
	return inProcess(t, sdk.KindTransport, pluginhost.TransportPlugin{}, open).(*pluginhost.Transport)
}

// AuthInProcess serves open in this process, as auth.Serve would in a
// plugin's, and returns the host's handle on it.
func AuthInProcess(t testing.TB, open auth.Opener) *pluginhost.Auth {
	t.Helper()
	return inProcess(t, sdk.KindAuth, pluginhost.AuthPlugin{}, open).(*pluginhost.Auth)
}

// BridgeInProcess serves desc and open in this process, as bridge.Serve
// would in a plugin's, and returns the host's handle on it.
func BridgeInProcess(t testing.TB, desc bridge.Description, open bridge.Opener) *pluginhost.Bridge {
	t.Helper()
	return inProcess(t, sdk.KindBridge, pluginhost.BridgePlugin{}, desc, open).(*pluginhost.Bridge)
}

// ModelInProcess serves open in this process, as model.Serve would in a
// plugin's, and returns the host's handle on it.
func ModelInProcess(t testing.TB, open model.Opener) *pluginhost.Model {
	t.Helper()
	return inProcess(t, sdk.KindModel, pluginhost.ModelPlugin{}, open).(*pluginhost.Model)
}
