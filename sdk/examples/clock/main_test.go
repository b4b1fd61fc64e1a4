package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/sdk/bridge"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/sdktest"
)

// The example keeps the bridge contract, and its tool answers through it.
func TestContract(t *testing.T) {
	sdktest.CheckBridge(t, description(), open, bridge.Config{Home: t.TempDir()})
	c, err := sdktest.BridgeInProcess(t, description(), open).Open(context.Background(), bridge.Config{Home: t.TempDir()}, pluginhost.BridgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(context.Background(), "clock_now", json.RawMessage(`{"zone":"UTC"}`))
	if err != nil || !strings.HasSuffix(res.Text, "Z") || res.IsError {
		t.Fatalf("clock_now = %+v, %v", res, err)
	}
}
