package bridge

import (
	"context"
	"encoding/json"
)

// Description is what a bridge plugin offers, known before it is opened:
// the host builds its MCP server from it.
type Description struct {
	// Name is the MCP server's name in the initialize result (e.g.
	// "hermes"); Version its version.
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Instructions is the server's instructions text for the client.
	Instructions string `json:"instructions,omitempty"`
	// Tools are the tools (mcp-go lists them to clients sorted by name).
	Tools []Tool `json:"tools"`
	// Env names the variables of $HERMES_HOME/.env (or the host's
	// environment, which wins) the plugin needs, e.g. a bot token; the host
	// passes those, and only those, in Config.Env.
	Env []string `json:"env,omitempty"`
}

// Tool is one tool of a bridge.
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	// InputSchema and OutputSchema are JSON Schema objects; OutputSchema
	// may be nil (then results carry no structured content).
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// ReadOnly and Destructive are the MCP tool annotations readOnlyHint
	// and destructiveHint.
	ReadOnly    bool `json:"read_only,omitempty"`
	Destructive bool `json:"destructive,omitempty"`
}

// Config is what the host tells a bridge plugin when it opens it.
type Config struct {
	// Home is $HERMES_HOME, the agent's folder.
	Home string `json:"home"`
	// Env holds the values of the variables Description.Env named that are
	// set; never logged by either side.
	Env map[string]string `json:"env,omitempty"`
	// Settings is the config.yaml block of this bridge (mcp_serve.<name>),
	// nil when absent.
	Settings map[string]any `json:"settings,omitempty"`
}

// Result is the outcome of one tool call.
type Result struct {
	// Text is the call's text content.
	Text string `json:"text"`
	// Structured is the structured content, a JSON object conforming to
	// the tool's OutputSchema; nil for none.
	Structured json.RawMessage `json:"structured,omitempty"`
	// IsError marks a tool-level failure the model should see (the MCP
	// result's isError), as opposed to an error of the call itself.
	IsError bool `json:"is_error,omitempty"`
}

// Server is what a bridge plugin implements once opened. Call may be
// called concurrently.
type Server interface {
	// Call runs the tool name with args (a JSON object; may be empty). An
	// error is a failure of the call itself (unknown tool, arguments that
	// are not an object, ctx ended); failures the tool reports to the
	// model are a Result with IsError.
	Call(ctx context.Context, name string, args json.RawMessage) (Result, error)
}

// Opener builds the Server for cfg. ctx bounds the opening only.
type Opener func(ctx context.Context, cfg Config) (Server, error)
