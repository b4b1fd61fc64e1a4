// Package mcpvalue holds hermes's own MCP values: what the host keeps and
// passes around of what a server offered and answered; mcp-go stays behind
// host/session and host/serve.
//
// The values are plain data: a tool with its schemas as the raw JSON the
// server wrote, a tool call's result as one value with its error flag,
// the resources and prompts a server lists, and what a server asks of the
// host (sampling, elicitation, roots) with the host's answers. Turning them into what a model
// or a person reads is host/toolview's; speaking the protocol is
// host/session's. This package imports nothing of either.
package mcpvalue

import (
	"bytes"
	"encoding/json"
)

// Tool is one tool a server lists (tools/list).
type Tool struct {
	// Name is the tool's MCP name, what a call names.
	Name string `json:"name"`
	// Title is the tool's display name ("" when the server gave none).
	Title string `json:"title,omitempty"`
	// Description is what the tool does, as the server wrote it.
	Description string `json:"description,omitempty"`
	// InputSchema and OutputSchema are the JSON schemas of the tool's
	// arguments and structured result, as the server wrote them (nil: none
	// given).
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are the tool's behaviour hints.
	Annotations Annotations `json:"annotations"`
}

// Annotations are a tool's behaviour hints, as the server gave them: each
// hint is nil when the server did not say.
type Annotations struct {
	// Title is a display name for the tool.
	Title string `json:"title,omitempty"`
	// ReadOnly: the tool does not modify its environment.
	ReadOnly *bool `json:"readOnlyHint,omitempty"`
	// Destructive: the tool may perform destructive updates.
	Destructive *bool `json:"destructiveHint,omitempty"`
	// Idempotent: calling it again with the same arguments has no more
	// effect.
	Idempotent *bool `json:"idempotentHint,omitempty"`
	// OpenWorld: the tool interacts with entities outside the host.
	OpenWorld *bool `json:"openWorldHint,omitempty"`
}

// HasSchema reports whether raw is a schema a server gave: not empty and
// not JSON null.
func HasSchema(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// Implementation names a server (serverInfo of initialize).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Capabilities are the capabilities a server declared, each kept as the
// JSON it wrote (nil: not declared).
type Capabilities struct {
	Tools       json.RawMessage `json:"tools,omitempty"`
	Resources   json.RawMessage `json:"resources,omitempty"`
	Prompts     json.RawMessage `json:"prompts,omitempty"`
	Logging     json.RawMessage `json:"logging,omitempty"`
	Completions json.RawMessage `json:"completions,omitempty"`
}
