// Package sdktest helps plugin authors test a plugin binary the way the host
// runs it: as a separate go-plugin process, spoken to through the sdk
// contract, with an mcp-go client on top.
package sdktest

import (
	"os/exec"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/mark3labs/mcp-go/client/transport"
)

// DialTransport starts the transport plugin binary at path, opens a
// transport for cfg and returns it, not yet started. The plugin is killed
// when the test ends. Use it with client.NewClient(t).
func DialTransport(t testing.TB, path string, cfg sdk.TransportConfig, opts sdk.ClientOptions) transport.Interface {
	t.Helper()
	c := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		Plugins:          sdk.PluginSet(),
		Cmd:              exec.Command(path),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolNetRPC},
		SkipHostEnv:      true,
		Logger:           hclog.New(&hclog.LoggerOptions{Name: "plugin", Level: hclog.Warn, Output: hclog.DefaultOutput}),
	})
	t.Cleanup(c.Kill)
	proto, err := c.Client()
	if err != nil {
		t.Fatalf("start plugin %s: %v", path, err)
	}
	raw, err := proto.Dispense(sdk.KindTransport)
	if err != nil {
		t.Fatalf("dispense transport from %s: %v", path, err)
	}
	tr, err := sdk.NewTransportClient(raw.(*sdk.TransportRPC), cfg, opts)
	if err != nil {
		t.Fatalf("open transport: %v", err)
	}
	return tr
}
