package model

import (
	"fmt"
	"strings"
	"unicode"

	sdkmodel "github.com/hermes-agent/hermes/sdk/model"
)

// Kind says what went wrong with a call to the model endpoint; callers
// decide on it, never on the message. The kinds are the model plugin
// contract's (sdk/model).
type Kind = sdkmodel.Kind

// The kinds of Error.
const (
	// KindAuth: the endpoint refused the API key (401, 403).
	KindAuth = sdkmodel.KindAuth
	// KindUnknownModel: the endpoint does not serve the model.
	KindUnknownModel = sdkmodel.KindUnknownModel
	// KindNotCompatible: what answered is not an OpenAI-compatible
	// chat-completions endpoint (HTML, another shape, a malformed chunk).
	KindNotCompatible = sdkmodel.KindNotCompatible
	// KindUnreachable: nothing answered at model.base_url.
	KindUnreachable = sdkmodel.KindUnreachable
	// KindRateLimited: 429, still after the retries.
	KindRateLimited = sdkmodel.KindRateLimited
	// KindServer: 5xx, still after the retries.
	KindServer = sdkmodel.KindServer
	// KindTooLarge: the response passed model.max_response_kb.
	KindTooLarge = sdkmodel.KindTooLarge
	// KindTimeout: the call passed its time limit or was cancelled.
	KindTimeout = sdkmodel.KindTimeout
	// KindRejected: any other refusal of the request (400, 422, ...).
	KindRejected = sdkmodel.KindRejected
	// KindNoModel: no model was named and model.default is not set.
	KindNoModel = sdkmodel.KindNoModel
)

// Error is a failed call to the model endpoint. Error() is one line that
// says what to do; the endpoint's own text in it is bounded and has no
// control characters (callers still escape it for a terminal).
type Error struct {
	Kind Kind
	// Status is the HTTP status, 0 without a response.
	Status int
	// Attempts is how many requests were made (retries included).
	Attempts int
	// Model and BaseURL are what was asked of whom.
	Model, BaseURL string
	// Detail is the endpoint's message, cleaned.
	Detail string
	// Cause is the underlying error, when the call ran in this process.
	Cause error
	msg   string
}

// FromPlugin returns the error a model plugin reported (e), with its
// message written for the endpoint of s.
func FromPlugin(e *sdkmodel.Error, s *Settings) *Error {
	return NewError(&Error{Kind: e.Kind, Status: e.Status, Attempts: e.Attempts, Model: e.Model, BaseURL: e.BaseURL, Detail: Clean(e.Detail)}, s)
}

// Plugin returns e as the model plugin contract carries it.
func (e *Error) Plugin() *sdkmodel.Error {
	return &sdkmodel.Error{Kind: e.Kind, Status: e.Status, Attempts: e.Attempts, Model: e.Model, BaseURL: e.BaseURL, Detail: e.Detail}
}

// NewError returns e with its message written for the endpoint of s.
func NewError(e *Error, s *Settings) *Error {
	e.message(s)
	return e
}

func (e *Error) Error() string { return e.msg }

// Unwrap returns the underlying error (an *openai.Error, a network error).
func (e *Error) Unwrap() error { return e.Cause }

// maxDetail bounds the endpoint's text kept in an error.
const maxDetail = 300

// Clean makes s one bounded line without control characters.
func Clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxDetail {
		s = string(r[:maxDetail]) + "…"
	}
	return s
}

// message builds e.msg from its fields.
func (e *Error) message(s *Settings) {
	detail := ""
	if e.Detail != "" {
		detail = ": " + e.Detail
	}
	keyHint := fmt.Sprintf("$%s (model.api_key_env) in the environment or $HERMES_HOME/.env", s.APIKeyEnv)
	switch e.Kind {
	case KindAuth:
		if s.APIKey == "" {
			e.msg = fmt.Sprintf("the model endpoint %s wants an API key (HTTP %d) and none is set; set %s", e.BaseURL, e.Status, keyHint)
		} else {
			e.msg = fmt.Sprintf("the model endpoint %s refused the API key (HTTP %d)%s; check %s", e.BaseURL, e.Status, detail, keyHint)
		}
	case KindUnknownModel:
		e.msg = fmt.Sprintf("the model endpoint %s does not serve model '%s' (HTTP %d)%s; name another with -m or model.default", e.BaseURL, e.Model, e.Status, detail)
	case KindNotCompatible:
		e.msg = fmt.Sprintf("%s is not an OpenAI-compatible chat-completions endpoint%s; check model.base_url (it usually ends in /v1)", e.BaseURL, detail)
	case KindUnreachable:
		e.msg = fmt.Sprintf("cannot reach the model endpoint %s after %d attempt(s)%s; check model.base_url and that the server is running", e.BaseURL, e.Attempts, detail)
	case KindRateLimited:
		e.msg = fmt.Sprintf("the model endpoint %s is rate limiting (HTTP 429) after %d attempt(s)%s; wait and try again, or raise model.max_retries / model.max_retry_delay", e.BaseURL, e.Attempts, detail)
	case KindServer:
		e.msg = fmt.Sprintf("the model endpoint %s failed (HTTP %d) after %d attempt(s)%s; try again later, or raise model.max_retries", e.BaseURL, e.Status, e.Attempts, detail)
	case KindTooLarge:
		e.msg = fmt.Sprintf("the response of the model endpoint %s passed model.max_response_kb (%d KiB); raise it in config.yaml", e.BaseURL, s.MaxResponseBytes>>10)
	case KindTimeout:
		e.msg = fmt.Sprintf("the model endpoint %s did not answer in time%s", e.BaseURL, detail)
	case KindNoModel:
		e.msg = "no model named: set model.default in config.yaml or name one with -m"
	default:
		e.msg = fmt.Sprintf("the model endpoint %s refused the request (HTTP %d)%s", e.BaseURL, e.Status, detail)
	}
}
