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
// RawInputSchema and RawOutputSchema, as the session's listing has them.
func decodeTool(data []byte) (mcp.Tool, error) {
	var t mcp.Tool
	if err := json.Unmarshal(data, &t); err != nil {
		return t, err
	}
	var raw struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return t, err
	}
	if len(raw.InputSchema) > 0 && string(raw.InputSchema) != "null" {
		t.InputSchema, t.RawInputSchema = mcp.ToolInputSchema{}, raw.InputSchema
	}
	if len(raw.OutputSchema) > 0 && string(raw.OutputSchema) != "null" {
		t.OutputSchema, t.RawOutputSchema = mcp.ToolOutputSchema{}, raw.OutputSchema
	}
	return t, nil
}

// UnmarshalJSON decodes a record, keeping its tools' schemas as written.
func (r *Record) UnmarshalJSON(data []byte) error {
	type plain Record
	var aux struct {
		*plain
		Tools []json.RawMessage `json:"tools"`
	}
	aux.plain = (*plain)(r)
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	r.Tools = make([]mcp.Tool, 0, len(aux.Tools))
	for i, raw := range aux.Tools {
		t, err := decodeTool(raw)
		if err != nil {
			return fmt.Errorf("tool %d: %w", i, err)
		}
		r.Tools = append(r.Tools, t)
	}
	return nil
}
