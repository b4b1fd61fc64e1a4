package model

import sdkmodel "github.com/hermes-agent/hermes/sdk/model"

// The conversation's types are the model kind's contract (sdk/model): what
// the host asks is what crosses to the model plugin, with nothing copied
// or converted.
type (
	// Message is one message of a conversation, in the model's terms.
	Message = sdkmodel.Message
	// Image is an image given to the model, base64-encoded.
	Image = sdkmodel.Image
	// ToolCall is a call of a function the model made.
	ToolCall = sdkmodel.ToolCall
	// Tool is a function offered to the model.
	Tool = sdkmodel.Tool
	// Request is one chat completion; OnText, when set, receives the text
	// as it streams in.
	Request = sdkmodel.Request
	// Response is the model's answer.
	Response = sdkmodel.Response
	// Usage is the tokens a call used, as the endpoint reports them.
	Usage = sdkmodel.Usage
)
