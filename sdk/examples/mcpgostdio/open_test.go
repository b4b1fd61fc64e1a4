package main

import (
	"os/exec"
	"testing"

	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
)

// openOnly starts the plugin and returns the error of opening cfg.
func openOnly(t *testing.T, bin string, cfg sdk.TransportConfig) error {
	c := plugin.NewClient(&plugin.ClientConfig{HandshakeConfig: sdk.Handshake, Plugins: sdk.PluginSet(),
		Cmd: exec.Command(bin), AllowedProtocols: []plugin.Protocol{plugin.ProtocolNetRPC}, SkipHostEnv: true})
	t.Cleanup(c.Kill)
	proto, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := proto.Dispense(sdk.KindTransport)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sdk.NewTransportClient(raw.(*sdk.TransportRPC), cfg, sdk.ClientOptions{})
	return err
}
