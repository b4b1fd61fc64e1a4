package mcpvalue

import "encoding/json"

// This file holds the requests a server sends the host (sampling,
// elicitation, roots) and the host's answers, as plain data.

// The kinds of sampling content block beyond a result's
// (SamplingContent.Type).
const (
	TypeToolUse    = "tool_use"
	TypeToolResult = "tool_result"
)

// SamplingRequest is a server's sampling/createMessage: a completion the
// server asks the host's model for.
type SamplingRequest struct {
	// Messages are the conversation, in order.
	Messages []SamplingMessage
	// ModelPreferences are the server's advice on the model to choose.
	ModelPreferences ModelPreferences
	// SystemPrompt is the system prompt the server asks for ("": none).
	SystemPrompt string
	// IncludeContext is which MCP context the server asks to include
	// ("none", "thisServer", "allServers"; "": not said).
	IncludeContext string
	// Temperature is the sampling temperature (0: not said).
	Temperature float64
	// MaxTokens is the most tokens the server wants (0: not said).
	MaxTokens int
	// StopSequences end the completion.
	StopSequences []string
	// Tools are the tools the model may use, their schemas as the server
	// wrote them.
	Tools []Tool
	// ToolChoice is how the model uses Tools: "auto", "required" or
	// "none" ("": not said, which is auto).
	ToolChoice string
	// Metadata is the request's metadata as the server wrote it (nil:
	// none); the host passes it on to nobody.
	Metadata json.RawMessage
}

// The tool choices of a sampling request (SamplingRequest.ToolChoice).
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceRequired = "required"
	ToolChoiceNone     = "none"
)

// ModelPreferences are a server's advice on the model: name hints in order
// of preference and the weights (0 to 1) of cost, speed and intelligence.
type ModelPreferences struct {
	// Hints are the model names (or parts of them) the server suggests,
	// first preferred; a hint without a name is "".
	Hints                                             []string
	CostPriority, SpeedPriority, IntelligencePriority float64
}

// SamplingMessage is one message of a sampling conversation: its role
// ("user" or "assistant") and its content blocks.
type SamplingMessage struct {
	Role    string
	Content []SamplingContent
}

// SamplingContent is one content block of a sampling message or answer.
// Type says which fields are set: text (Text), image and audio (Data,
// base64, and MIMEType), tool_use (ID, Name, Input) and tool_result
// (ToolUseID, Content, Structured, IsError). A block of another kind keeps
// its Type and nothing else; one that could not be read has no Type.
type SamplingContent struct {
	Type string
	// Text is a text block's text.
	Text string
	// Data is an image's or audio's base64 data; MIMEType its type.
	Data, MIMEType string
	// ID identifies a tool use, Name is the tool's and Input its arguments
	// as JSON.
	ID, Name string
	Input    json.RawMessage
	// ToolUseID is the tool use a tool result answers; Content its content
	// blocks, Structured its structuredContent as JSON (nil: none) and
	// IsError its error flag.
	ToolUseID  string
	Content    []Content
	Structured json.RawMessage
	IsError    bool
}

// SamplingResult is the host's answer to a sampling request: the model's
// message (role "assistant"), the model that wrote it and why it stopped.
type SamplingResult struct {
	Role string
	// Content is the answer: one text block, or the tool uses the model
	// asked for.
	Content []SamplingContent
	Model   string
	// StopReason is "endTurn", "maxTokens", "stopSequence" or "toolUse".
	StopReason string
}

// The modes of an elicitation request (ElicitationRequest.Mode).
const (
	ElicitationModeForm = "form"
	ElicitationModeURL  = "url"
)

// ElicitationRequest is a server's elicitation/create: input the server
// asks of the person.
type ElicitationRequest struct {
	// Mode is "form" or "url" ("": form).
	Mode string
	// Message says what the server asks for and why.
	Message string
	// RequestedSchema is a form's schema as the server wrote it (nil:
	// none).
	RequestedSchema json.RawMessage
	// URL is the page a URL-mode request asks the person to open, and
	// ElicitationID the server's name of the request.
	URL, ElicitationID string
}

// The answers to an elicitation request (ElicitationResult.Action).
const (
	ElicitationAccept  = "accept"
	ElicitationDecline = "decline"
	ElicitationCancel  = "cancel"
)

// ElicitationResult is the host's answer to an elicitation request: the
// person accepted (with Content, a form's answers by field name; nil for a
// URL), declined or cancelled.
type ElicitationResult struct {
	Action  string
	Content map[string]any
}

// ElicitationCapability is which elicitation modes the host offers.
type ElicitationCapability struct {
	Form, URL bool
}

// Root is one root the host offers servers (roots/list): a file:// URI and
// its name.
type Root struct {
	URI, Name string
}
