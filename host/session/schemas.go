package session

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// maxRawSchemas bounds the tools whose raw schemas a session keeps; a
// server listing more starts the map afresh.
const maxRawSchemas = 10000

// rawSchemas keeps the input and output schemas of the tools a server
// listed, as the server wrote them. mcp-go decodes a tool's schema into a
// struct that keeps only a few keywords ($schema, allOf, if/then/else and
// the rest of JSON Schema 2020-12 are dropped); the host hands the model
// the schema as written (normalised by toolview, which leaves keywords it
// does not need to touch alone).
type rawSchemas struct {
	mu     sync.Mutex
	byName map[string]rawSchema
}

type rawSchema struct {
	input, output json.RawMessage
}

// keep records the schemas of one tools/list result.
func (r *rawSchemas) keep(result json.RawMessage) {
	var page struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byName == nil || len(r.byName)+len(page.Tools) > maxRawSchemas {
		r.byName = make(map[string]rawSchema, len(page.Tools))
	}
	for _, t := range page.Tools {
		r.byName[t.Name] = rawSchema{input: objectOrNil(t.InputSchema), output: objectOrNil(t.OutputSchema)}
	}
}

// objectOrNil returns raw when it is a JSON object, else nil.
func objectOrNil(raw json.RawMessage) json.RawMessage {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return raw
		}
		return nil
	}
	return nil
}

// fill gives each tool its schemas as the server wrote them, where known.
func (r *rawSchemas) fill(tools []mcp.Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range tools {
		s, ok := r.byName[tools[i].Name]
		if !ok {
			continue
		}
		if s.input != nil {
			tools[i].RawInputSchema, tools[i].InputSchema = s.input, mcp.ToolInputSchema{}
		}
		if s.output != nil {
			tools[i].RawOutputSchema, tools[i].OutputSchema = s.output, mcp.ToolOutputSchema{}
		}
	}
}

// ListToolsByPage lists one page of the server's tools, each with its
// schemas as the server wrote them (RawInputSchema, RawOutputSchema).
func (s *Session) ListToolsByPage(ctx context.Context, req mcp.ListToolsRequest) (*mcp.ListToolsResult, error) {
	res, err := s.Client.ListToolsByPage(ctx, req)
	if err != nil || s.watch == nil {
		return res, err
	}
	s.watch.schemas.fill(res.Tools)
	return res, nil
}
