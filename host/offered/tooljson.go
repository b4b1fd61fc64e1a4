package offered

import (
	"encoding/json"
	"fmt"

	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// decodeTool decodes one tool of a record or of a version 1 baseline: as
// hermes writes it (version 3), or as mcp-go wrote it (versions 1 and 2),
// whose fields hermes keeps are named the same; the others (icons,
// execution, _meta) are dropped. The schemas stay as written; a schema
// that is JSON null is none.
func decodeTool(data []byte) (mcpvalue.Tool, error) {
	var t mcpvalue.Tool
	if err := json.Unmarshal(data, &t); err != nil {
		return mcpvalue.Tool{}, err
	}
	tidy(&t)
	return t, nil
}

// tidy drops schemas that are JSON null.
func tidy(t *mcpvalue.Tool) {
	if !mcpvalue.HasSchema(t.InputSchema) {
		t.InputSchema = nil
	}
	if !mcpvalue.HasSchema(t.OutputSchema) {
		t.OutputSchema = nil
	}
}

// decodeTools decodes a JSON array of tools (null or absent: none), each
// as decodeTool does.
func decodeTools(data []byte) ([]mcpvalue.Tool, error) {
	tools, ok := readTools(data)
	if !ok {
		tools = nil
		if len(data) > 0 {
			if err := json.Unmarshal(data, &tools); err != nil {
				return nil, fmt.Errorf("tools: %w", err)
			}
		}
	}
	return tidyAll(tools), nil
}

// tidyAll tidies each of tools; nil is none.
func tidyAll(tools []mcpvalue.Tool) []mcpvalue.Tool {
	if tools == nil {
		tools = []mcpvalue.Tool{}
	}
	for i := range tools {
		tidy(&tools[i])
	}
	return tools
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
