package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/sdktest"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// TestMain doubles as the reference MCP server the contract check talks to.
func TestMain(m *testing.M) {
	sdktest.ServeReferenceIfAsked()
	os.Exit(m.Run())
}

func build(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "hermes-transport-mcpgostdio")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build example: %v\n%s", err, out)
	}
	return bin
}

// The example plugin, built and run as its own process, passes the whole
// contract check against a real stdio server.
func TestExamplePluginContract(t *testing.T) {
	cmd, env := sdktest.ReferenceCommand()
	sdktest.CheckTransport(t, build(t), transport.Config{Server: "example", Transport: "mcpgostdio", Command: cmd, Env: env})
}

// A config error from the factory reaches the host with its code.
func TestExamplePluginConfigError(t *testing.T) {
	p := sdktest.Start(t, build(t))
	_, err := p.Dial(context.Background(), transport.Config{Server: "example", Transport: "mcpgostdio"})
	if sdk.ErrorCode(err) != sdk.CodeConfig {
		t.Fatalf("want a config error, got %v", err)
	}
}
