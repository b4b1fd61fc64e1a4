// Command hermes-bridge-clock is an example bridge plugin: one tool,
// clock_now, that tells the time in a zone. Build it as
// hermes-bridge-clock; `hermes mcp serve --bridge clock` then offers it.
package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/bridge"
)

var (
	in  = json.RawMessage(`{"type":"object","properties":{"zone":{"type":"string"}}}`)
	out = json.RawMessage(`{"type":"object","properties":{"now":{"type":"string"}},"required":["now"]}`)
)

func main() {
	bridge.Serve(description(), open)
}

func description() bridge.Description {
	return bridge.Description{
		Name: "clock", Instructions: "Tells the time.",
		Tools: []bridge.Tool{{Name: "clock_now", Description: "The time now, in an IANA zone (default UTC).", InputSchema: in, OutputSchema: out, ReadOnly: true}},
	}
}

func open(context.Context, bridge.Config) (bridge.Server, error) { return clock{}, nil }

type clock struct{}

func (clock) Call(_ context.Context, name string, args json.RawMessage) (bridge.Result, error) {
	if name != "clock_now" {
		return bridge.Result{}, sdk.NewError(sdk.CodeConfig, "unknown tool %q", name)
	}
	var a struct {
		Zone string `json:"zone"`
	}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &a); err != nil {
			return bridge.Result{Text: "arguments: " + err.Error(), IsError: true}, nil
		}
	}
	loc, err := time.LoadLocation(a.Zone)
	if err != nil {
		return bridge.Result{Text: "unknown zone " + a.Zone, IsError: true}, nil
	}
	now := time.Now().In(loc).Format(time.RFC3339)
	s, _ := json.Marshal(map[string]string{"now": now})
	return bridge.Result{Text: now, Structured: s}, nil
}
