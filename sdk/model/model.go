package model

import (
	"context"
	"time"
)

// Config is what the host tells a model plugin when it opens it: the
// endpoint and the bounds of its calls (the model: block of config.yaml,
// defaults applied).
type Config struct {
	// BaseURL is the endpoint, e.g. https://api.openai.com/v1 (no
	// trailing slash).
	BaseURL string `json:"base_url"`
	// Default is the model asked when a Request names none; "" when the
	// config names none.
	Default string `json:"default,omitempty"`
	// APIKey is the endpoint's key, "" for endpoints that need none. It is
	// a secret: never log it, and take it out of every error (an endpoint
	// may echo it).
	APIKey string `json:"api_key,omitempty"`
	// MaxResponseBytes bounds one response body.
	MaxResponseBytes int64 `json:"max_response_bytes"`
	// MaxRetries and MaxRetryDelay bound the retries of a call answered
	// with 429 or 5xx, or not answered at all.
	MaxRetries    int           `json:"max_retries"`
	MaxRetryDelay time.Duration `json:"max_retry_delay"`
	// Timeout bounds one call, retries included.
	Timeout time.Duration `json:"timeout"`
}

// Message is one message of a conversation.
type Message struct {
	// Role is "system", "user", "assistant" or "tool".
	Role string `json:"role"`
	// Text is the message's text.
	Text string `json:"text,omitempty"`
	// Images go with a user message.
	Images []Image `json:"images,omitempty"`
	// ToolCalls are an assistant message's calls.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// Image is an image given to the model.
type Image struct {
	MIME string `json:"mime"`
	// Data is the image, base64-encoded.
	Data string `json:"data"`
}

// ToolCall is a call of a function the model made.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON text the model wrote (not checked).
	Arguments string `json:"arguments"`
}

// Tool is a function offered to the model.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON schema of the arguments (an object schema);
	// nil is an object without properties.
	Parameters map[string]any `json:"parameters,omitempty"`
}

// Request is one chat completion.
type Request struct {
	// Model is the model to ask; "" is Config.Default.
	Model    string    `json:"model,omitempty"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
	// ToolChoice is "required" when the model must call a tool, "" leaves
	// the choice to the model (auto). It matters only with Tools.
	ToolChoice string `json:"tool_choice,omitempty"`
	// MaxTokens bounds the completion; 0 leaves it to the endpoint.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Temperature is sent when not nil.
	Temperature *float64 `json:"temperature,omitempty"`
	Stop        []string `json:"stop,omitempty"`
	// OnText, when set, receives the text of the answer as it streams in,
	// in order. In a plugin it is set when the host wants the text (the
	// sdk relays it); it is never sent.
	OnText func(delta string) `json:"-"`
}

// Response is the model's answer.
type Response struct {
	// Model is the model that answered, as the endpoint names it.
	Model string `json:"model"`
	Text  string `json:"text,omitempty"`
	// ToolCalls are the calls the model made, in its order.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// FinishReason is the endpoint's: "stop", "length", "tool_calls", ...
	FinishReason string `json:"finish_reason,omitempty"`
	Usage        Usage  `json:"usage"`
	// Choices is how many choices the endpoint sent (0: an empty answer).
	Choices int `json:"choices"`
}

// Usage is the tokens a call used, as the endpoint reports them (zero when
// it does not).
type Usage struct {
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
	Total      int64 `json:"total"`
}

// Model is what a model plugin implements once opened. Complete may be
// called concurrently.
type Model interface {
	// Complete makes one completion of req. It ends when ctx does (the
	// host cancelled, or the call's deadline passed). A failure of the
	// endpoint is an *Error; any other error is the plugin's own.
	Complete(ctx context.Context, req Request) (Response, error)
}

// Opener builds the Model for cfg. ctx bounds the opening only; it should
// not call the endpoint.
type Opener func(ctx context.Context, cfg Config) (Model, error)
