package session_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// schema2020 uses the JSON Schema 2020-12 keywords mcp-go's tool struct
// drops ($schema, composition, conditionals, $anchor) beside those it keeps.
const schema2020 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {"address": {"$anchor": "addr", "type": "object", "properties": {"city": {"type": "string"}}}},
  "properties": {
    "home": {"$ref": "#/$defs/address"},
    "kind": {"type": "string", "enum": ["a", "b"]},
    "n": {"type": "integer"}
  },
  "allOf": [{"required": ["kind"]}],
  "anyOf": [{"required": ["home"]}, {"required": ["n"]}],
  "if": {"properties": {"kind": {"const": "a"}}},
  "then": {"required": ["n"]},
  "else": {"required": ["home"]},
  "additionalProperties": false
}`

// A tool's schema reaches the model as the server wrote it, in both
// revisions: hermes's normalisation leaves the 2020-12 keywords alone.
func TestToolSchemasKeep2020Keywords(t *testing.T) {
	t.Parallel()
	d, _ := deps(t)
	srv := server.NewMCPServer("schemas", "1", server.WithToolCapabilities(false))
	srv.AddTool(mcp.NewToolWithRawSchema("rich", "2020-12 schema", json.RawMessage(schema2020)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(srv, server.WithStateLess(true)))
	t.Cleanup(ts.Close)
	var want map[string]any
	if err := json.Unmarshal([]byte(schema2020), &want); err != nil {
		t.Fatal(err)
	}
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			s := mustConnect(t, at(remote("http", ts.URL+"/mcp"), rev), d)
			if s.Protocol.Revision != rev {
				t.Fatalf("speaks %s", s.Protocol.Revision)
			}
			l, err := registry.ListTools(context.Background(), s, s.Server)
			if err != nil || len(l.Tools) != 1 {
				t.Fatalf("listing %+v, %v", l, err)
			}
			var got map[string]any
			if err := json.Unmarshal(l.Tools[0].InputSchema, &got); err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("raw schema %s, %v", l.Tools[0].InputSchema, err)
			}
			params, _ := json.Marshal(toolview.ConvertTool("x", l.Tools[0]).Parameters)
			var model map[string]any
			_ = json.Unmarshal(params, &model)
			for _, k := range []string{"$schema", "$defs", "allOf", "anyOf", "if", "then", "else", "additionalProperties"} {
				if !reflect.DeepEqual(model[k], want[k]) {
					t.Errorf("the model's schema has %s = %v, want %v", k, model[k], want[k])
				}
			}
			if a := model["$defs"].(map[string]any)["address"].(map[string]any)["$anchor"]; a != "addr" {
				t.Errorf("$anchor inside $defs = %v", a)
			}
		})
	}
}
