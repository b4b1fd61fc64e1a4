package offered

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// mcp.Tool has no decoder of its own: decoded as a plain struct its schemas
// land in InputSchema and OutputSchema, which drop what their fields do
// not name ($schema, additionalProperties, $defs, ...). A tool read back
// from the store would then be another tool than the one the server sent:
// its digest would not match (the record refused), and the model would be
// offered a poorer schema. decodeTool keeps the schemas as written, in
// RawInputSchema and RawOutputSchema, as the session's listing has them,
// in one pass over the tool's JSON.
func decodeTool(data []byte) (mcp.Tool, error) {
	var w toolWire
	if err := json.Unmarshal(data, &w); err != nil {
		return mcp.Tool{}, err
	}
	return w.tool(), nil
}

// plainTool is an mcp.Tool without its methods (its MarshalJSON).
type plainTool mcp.Tool

// toolWire decodes a tool with its schemas as written: the outer fields
// take the schemas' keys from the embedded tool's.
type toolWire struct {
	plainTool
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// tool is the decoded tool, its schemas raw when they were given.
func (w *toolWire) tool() mcp.Tool {
	t := mcp.Tool(w.plainTool)
	if len(w.InputSchema) > 0 && string(w.InputSchema) != "null" {
		t.InputSchema, t.RawInputSchema = mcp.ToolInputSchema{}, w.InputSchema
	}
	if len(w.OutputSchema) > 0 && string(w.OutputSchema) != "null" {
		t.OutputSchema, t.RawOutputSchema = mcp.ToolOutputSchema{}, w.OutputSchema
	}
	return t
}

// decodeTools decodes a JSON array of tools (null or absent: none), each
// as decodeTool does.
func decodeTools(data []byte) ([]mcp.Tool, error) {
	var ws []toolWire
	if len(data) > 0 {
		if err := json.Unmarshal(data, &ws); err != nil {
			return nil, fmt.Errorf("tools: %w", err)
		}
	}
	tools := make([]mcp.Tool, len(ws))
	for i := range ws {
		tools[i] = ws[i].tool()
	}
	return tools, nil
}

// UnmarshalJSON decodes a record, keeping its tools' schemas as written.
// It checks nothing: DecodeRecord does.
func (r *Record) UnmarshalJSON(data []byte) error {
	w := recordWire{plainRecord: (*plainRecord)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	tools, err := decodeTools(w.Tools)
	if err != nil {
		return err
	}
	r.Tools = tools
	return nil
}
