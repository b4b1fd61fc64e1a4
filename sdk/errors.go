package sdk

import (
	"context"
	"errors"
	"fmt"
)

// Error codes that survive the trip between a plugin and the host. A plugin
// classifies what happened on its wire into one of these; the host reacts to
// codes only.
const (
	// CodeClosed: the connection is gone (server exited, stream broken,
	// plugin died). The host reconnects.
	CodeClosed = "closed"
	// CodeNotFound: the server's executable does not exist.
	CodeNotFound = "not_found"
	// CodeAuth: the server wants credentials (HTTP 401/403).
	CodeAuth = "auth"
	// CodeLoginNeeded: the server wants credentials that only an
	// interactive login can give (no token, a revoked refresh token, more
	// scope); the message says which command to run. Background work
	// reports it and never prompts.
	CodeLoginNeeded = "login_needed"
	// CodeNotMCP: the endpoint is not an MCP endpoint (e.g. a web page).
	CodeNotMCP = "not_mcp"
	// CodeSessionExpired: the server no longer knows the session; a new
	// session (a reconnect) fixes it.
	CodeSessionExpired = "session_expired"
	// CodeHTTP: an HTTP status the transport could not handle.
	CodeHTTP = "http"
	// CodeTimeout: the server did not answer in time.
	CodeTimeout = "timeout"
	// CodeCanceled: the host cancelled the call.
	CodeCanceled = "canceled"
	// CodeConfig: the server entry is unusable (bad URL, missing file...).
	CodeConfig = "config"
	// CodeGarbage: the server wrote something that is not JSON-RPC.
	CodeGarbage = "garbage"
	// CodeTooLarge: a message was over a size limit.
	CodeTooLarge = "too_large"
	// CodeSandbox: the sandbox the server asked for cannot be enforced
	// here (or was refused); the message says why and how to override.
	CodeSandbox = "sandbox"
	// CodeContract: the two sides do not speak the same contract (wrong
	// kind, wrong version, malformed frame).
	CodeContract = "contract"
	// CodeOther: anything else.
	CodeOther = "other"
)

// Error is an error with a kind the host can act on. It is what crosses the
// process boundary; other errors arrive as CodeOther.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Status is the HTTP status, when there was one.
	Status int `json:"status,omitempty"`
	// WWWAuthenticate is the challenge of a 401/403 response.
	WWWAuthenticate string `json:"www_authenticate,omitempty"`
}

// NewError returns an *Error with the given code and formatted message.
func NewError(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Is makes errors.Is(err, context.Canceled) true for CodeCanceled and
// errors.Is(err, context.DeadlineExceeded) true for CodeTimeout.
func (e *Error) Is(target error) bool {
	switch target {
	case context.Canceled:
		return e.Code == CodeCanceled
	case context.DeadlineExceeded:
		return e.Code == CodeTimeout
	}
	return false
}

// AsError converts any error to an *Error for the wire: an *Error (or one it
// wraps) as it is, context errors as CodeCanceled or CodeTimeout, anything
// else as CodeOther.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeTimeout, Message: err.Error()}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Code: CodeCanceled, Message: err.Error()}
	}
	return &Error{Code: CodeOther, Message: err.Error()}
}

// ErrorCode returns the code of err if it is or wraps an *Error, else "".
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
