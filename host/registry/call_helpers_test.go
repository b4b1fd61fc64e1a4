package registry_test

import (
	"context"
	"encoding/json"

	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/registry"
)

// encodeArgs is a call's arguments as the registry takes them: the JSON
// object a model writes (nil: none).
func encodeArgs(args map[string]any) json.RawMessage {
	if args == nil {
		return nil
	}
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return raw
}

// call is m.Call with arguments given as a map, returning what the model
// gets.
func call(m *registry.Manager, ctx context.Context, name string, args map[string]any) (string, error) {
	r, err := m.Call(ctx, name, encodeArgs(args))
	return r.Text, err
}

// callTool is m.CallTool with arguments given as a map.
func callTool(m *registry.Manager, ctx context.Context, server, tool string, args map[string]any) (mcpvalue.CallResult, error) {
	return m.CallTool(ctx, server, tool, encodeArgs(args))
}
