package serve_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestToolInputSchemaValidation holds the patched JSON-Schema library
// (third_party/santhosh-tekuri-jsonschema: meta-schemas compiled on first
// use instead of at init) to what mcp-go's server promises with
// WithInputSchemaValidation: arguments that do not match a tool's input
// schema are refused before the handler runs, in the default draft and in
// an older draft named by $schema, and a schema that is not valid against
// its draft's meta-schema is not enforced (mcp-go skips schemas that do not
// compile). The last case fails if the meta-schemas were never compiled.
func TestToolInputSchemaValidation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	srv := server.NewMCPServer("schemas", "1.0.0", server.WithToolCapabilities(false), server.WithInputSchemaValidation())
	calls := map[string]int{}
	handler := func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		calls[req.Params.Name]++
		return mcp.NewToolResultText("ran"), nil
	}
	srv.AddTool(mcp.NewTool("count",
		mcp.WithNumber("n", mcp.Required(), mcp.Min(1)),
	), handler)
	srv.AddTool(mcp.NewToolWithRawSchema("draft7", "", json.RawMessage(`{
		"$schema": "http://json-schema.org/draft-07/schema#",
		"type": "object",
		"properties": {"name": {"type": "string", "maxLength": 3}},
		"required": ["name"]
	}`)), handler)
	// "type": 5 is not a JSON-Schema type: the draft-2020-12 meta-schema
	// refuses the schema, so it does not compile and is not enforced.
	srv.AddTool(mcp.NewToolWithRawSchema("broken", "", json.RawMessage(`{
		"type": "object",
		"properties": {"x": {"type": 5}}
	}`)), handler)

	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}

	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return res
	}
	text := func(res *mcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}

	for _, tc := range []struct {
		tool   string
		args   map[string]any
		refuse bool
	}{
		{"count", map[string]any{"n": 2}, false},
		{"count", map[string]any{"n": 0}, true},     // minimum
		{"count", map[string]any{"n": "two"}, true}, // type
		{"count", map[string]any{}, true},           // required
		{"draft7", map[string]any{"name": "abc"}, false},
		{"draft7", map[string]any{"name": "abcd"}, true}, // maxLength
		{"draft7", map[string]any{"name": 7}, true},      // type
		{"broken", map[string]any{"x": "anything"}, false},
	} {
		before := calls[tc.tool]
		res := call(tc.tool, tc.args)
		ran := calls[tc.tool] > before
		if tc.refuse {
			if ran || !res.IsError {
				t.Errorf("%s %v: handler ran=%v, isError=%v (%q); want the arguments refused by the input schema",
					tc.tool, tc.args, ran, res.IsError, text(res))
			}
			continue
		}
		if !ran || res.IsError {
			t.Errorf("%s %v: handler ran=%v, isError=%v (%q); want the call to reach the handler",
				tc.tool, tc.args, ran, res.IsError, text(res))
		}
	}
}
