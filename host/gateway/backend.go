package gateway

import (
	"context"
	"encoding/json"

	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/registry"
)

// registryBackend serves a registry's tools: those the model would see,
// filters applied, under the same names, with their schemas as the
// servers listed them.
type registryBackend struct{ m *registry.Manager }

// FromRegistry is the Backend of registry m. The registry's own utility
// tools (resources and prompts as tools, for a model) are left out: the
// gateway serves resources and prompts as MCP does.
func FromRegistry(m *registry.Manager) Backend { return registryBackend{m} }

func (b registryBackend) Tools() []Tool {
	defs := b.m.Tools()
	listed := map[string]map[string]mcpvalue.Tool{}
	out := make([]Tool, 0, len(defs))
	for _, d := range defs {
		if d.Utility != "" {
			continue
		}
		byName, ok := listed[d.Server]
		if !ok {
			tools, _ := b.m.ServerTools(d.Server)
			byName = make(map[string]mcpvalue.Tool, len(tools))
			for _, t := range tools {
				byName[t.Name] = t
			}
			listed[d.Server] = byName
		}
		def, ok := byName[d.OriginalName]
		if !ok {
			continue
		}
		out = append(out, Tool{Name: d.Name, Server: d.Server, Def: def})
	}
	return out
}

func (b registryBackend) Call(ctx context.Context, name string, args json.RawMessage) (mcpvalue.CallResult, error) {
	rec, err := b.m.Resolve(name)
	if err != nil {
		return mcpvalue.CallResult{}, err
	}
	return b.m.CallTool(ctx, rec.Server, rec.Tool, args)
}
