package model

import "fmt"

// Kind says what went wrong with a call to the model endpoint; the host
// decides on it, never on the message.
type Kind string

// The kinds of Error.
const (
	// KindAuth: the endpoint refused the API key (401, 403).
	KindAuth Kind = "auth"
	// KindUnknownModel: the endpoint does not serve the model (404 with a
	// JSON error, or code model_not_found).
	KindUnknownModel Kind = "unknown_model"
	// KindNotCompatible: what answered is not a chat-completions endpoint
	// of the plugin's kind (HTML, another shape, a malformed chunk).
	KindNotCompatible Kind = "not_compatible"
	// KindUnreachable: nothing answered at Config.BaseURL.
	KindUnreachable Kind = "unreachable"
	// KindRateLimited: 429, still after the retries.
	KindRateLimited Kind = "rate_limited"
	// KindServer: 5xx, still after the retries.
	KindServer Kind = "server"
	// KindTooLarge: the response passed Config.MaxResponseBytes.
	KindTooLarge Kind = "too_large"
	// KindTimeout: the call passed its time limit or was cancelled.
	KindTimeout Kind = "timeout"
	// KindRejected: any other refusal of the request (400, 422, ...).
	KindRejected Kind = "rejected"
	// KindNoModel: no model was named and Config.Default is not set.
	KindNoModel Kind = "no_model"
)

// Error is a failed call to the model endpoint, as a plugin reports it.
// The host writes the message a person reads from its fields; Detail is
// the endpoint's own text, which the plugin keeps short, on one line and
// without the API key.
type Error struct {
	Kind Kind `json:"kind"`
	// Status is the HTTP status, 0 without a response.
	Status int `json:"status,omitempty"`
	// Attempts is how many requests were made (retries included).
	Attempts int `json:"attempts,omitempty"`
	// Model and BaseURL are what was asked of whom.
	Model   string `json:"model,omitempty"`
	BaseURL string `json:"base_url,omitempty"`
	// Detail is the endpoint's message.
	Detail string `json:"detail,omitempty"`
}

func (e *Error) Error() string {
	s := fmt.Sprintf("model endpoint %s: %s", e.BaseURL, e.Kind)
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}
