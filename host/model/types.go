package model

// Message is one message of a conversation, in the model's terms.
type Message struct {
	// Role is "system", "user", "assistant" or "tool".
	Role string
	// Text is the message's text.
	Text string
	// Images go with a user message, as data: URLs.
	Images []Image
	// ToolCalls are an assistant message's calls.
	ToolCalls []ToolCall
	// ToolCallID names the call a tool message answers.
	ToolCallID string
}

// Image is an image given to the model.
type Image struct {
	MIME string
	// Data is the image, base64-encoded.
	Data string
}

// ToolCall is a call of a function the model made.
type ToolCall struct {
	ID, Name string
	// Arguments is the JSON text the model wrote (not checked).
	Arguments string
}

// Tool is a function offered to the model.
type Tool struct {
	Name, Description string
	// Parameters is the JSON schema of the arguments (an object schema).
	Parameters map[string]any
}

// Request is one chat completion.
type Request struct {
	// Model is the model to ask; "" is model.default.
	Model    string
	Messages []Message
	Tools    []Tool
	// ToolChoice is "required" when the model must call a tool, "" leaves
	// the choice to the model (auto). Sent only with Tools.
	ToolChoice string
	// MaxTokens bounds the completion; 0 leaves it to the endpoint.
	MaxTokens int
	// Temperature is sent when not nil.
	Temperature *float64
	Stop        []string
	// OnText, when set, receives the text as it streams in.
	OnText func(delta string) `json:"-"`
}

// Response is the model's answer.
type Response struct {
	// Model is the model that answered (as the endpoint names it).
	Model string
	Text  string
	// ToolCalls are the calls the model made, in its order.
	ToolCalls []ToolCall
	// FinishReason is the endpoint's: "stop", "length", "tool_calls", ...
	FinishReason string
	Usage        Usage
	// Choices is how many choices the endpoint sent (0: an empty answer).
	Choices int
}

// Usage is the tokens a call used, as the endpoint reports them (zero
// when it does not).
type Usage struct {
	Prompt, Completion, Total int64
}
