// Package failure owns the host's one classification of what went wrong:
// a typed Code for every failure the host acts on, how an error gets its
// code (Of), and the questions the host asks of a failure (Retry,
// Reconnect, NeedsLogin, Filtered, NotFound, ...), and the codes a person
// or a script reads in a command's --json output with what each means
// (Reported, ModelReported).
//
// The codes a plugin reports cross the process boundary as sdk.Error codes
// and keep their spelling here (CodeClosed is sdk.CodeClosed); the host adds
// its own for what only it knows (a filtered tool, an unknown server, an
// open breaker). Nothing in the host decides on an error's text: an error
// from mcp-go's client is classified once, where it enters the host
// (FromClient), and everything downstream asks Of or a predicate, through
// any wrapping (errors.As).
package failure

import (
	"context"
	"errors"
	"fmt"

	"github.com/hermes-agent/hermes/sdk"
)

// Code is what kind of failure an error is.
type Code string

// Codes a plugin reports (sdk.Error codes, see sdk/errors.go).
const (
	CodeClosed         Code = sdk.CodeClosed         // the connection is gone; a reconnect helps
	CodeNotFound       Code = sdk.CodeNotFound       // the server's executable (or the plugin) does not exist
	CodeAuth           Code = sdk.CodeAuth           // the server wants credentials (HTTP 401/403)
	CodeLoginNeeded    Code = sdk.CodeLoginNeeded    // only an interactive login helps
	CodeNotMCP         Code = sdk.CodeNotMCP         // the endpoint is not an MCP endpoint
	CodeSessionExpired Code = sdk.CodeSessionExpired // the server forgot the session; a new one helps
	CodeHTTP           Code = sdk.CodeHTTP           // an HTTP status the transport could not handle
	CodeTimeout        Code = sdk.CodeTimeout        // no answer in time
	CodeCanceled       Code = sdk.CodeCanceled       // the caller gave up
	CodeConfig         Code = sdk.CodeConfig         // the server entry is unusable
	CodeGarbage        Code = sdk.CodeGarbage        // the server wrote something that is not JSON-RPC
	CodeTooLarge       Code = sdk.CodeTooLarge       // a message was over a size limit
	CodeSandbox        Code = sdk.CodeSandbox        // the sandbox asked for cannot be enforced
	CodeContract       Code = sdk.CodeContract       // host and plugin do not speak the same contract
	CodeOther          Code = sdk.CodeOther          // anything else; the message says what
)

// Codes only the host gives.
const (
	// CodeMethodNotFound: the server answered the request with JSON-RPC
	// error -32601 (it does not know the method).
	CodeMethodNotFound Code = "method_not_found"
	// CodeRefused: the server answered the request with a JSON-RPC error
	// of its own (or an answer mcp-go could not use); the connection is
	// fine.
	CodeRefused Code = "refused"
	// CodeFiltered: the server offers the tool, but its
	// tools.include/exclude removes it.
	CodeFiltered Code = "filtered"
	// CodeNoSuchTool: no registered tool has that name.
	CodeNoSuchTool Code = "no_such_tool"
	// CodeUnknownServer: no server of that name is configured.
	CodeUnknownServer Code = "unknown_server"
	// CodeDisabled: the server is configured with enabled: false.
	CodeDisabled Code = "disabled"
	// CodeBreaker: the server's circuit breaker is open.
	CodeBreaker Code = "breaker"
	// CodeDown: no session came up in time; a reconnect was requested.
	CodeDown Code = "down"
	// CodeInvalid: the arguments of a call are unusable (a missing
	// parameter).
	CodeInvalid Code = "invalid"
	// CodeDrift: the tool's definition changed since the person approved
	// it and its server's tools.on_change is deny: it is withheld until
	// accepted (hermes mcp configure).
	CodeDrift Code = "drift"
)

// Error is a failure the host gives a code: what went wrong in one line,
// and the error behind it, if any.
type Error struct {
	Code Code
	// Msg is the one-line message; "" shows Err's.
	Msg string
	Err error
}

// New returns an *Error with code and a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Wrap gives err a code, keeping its message.
func Wrap(code Code, err error) *Error { return &Error{Code: code, Err: err} }

// Error returns the message.
func (e *Error) Error() string {
	if e.Msg == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the error behind e.
func (e *Error) Unwrap() error { return e.Err }

// FailureCode returns e's code.
func (e *Error) FailureCode() Code { return e.Code }

// Coded is an error that knows its code. The host's error types
// (session.ConnectError, registry.CallError, *Error) implement it; Of asks
// the outermost one in a chain.
type Coded interface {
	error
	FailureCode() Code
}

// Of returns the code of err: that of the outermost Coded error in its
// chain, else that of a plugin's *sdk.Error in it, else CodeTimeout or
// CodeCanceled for a context's end, else CodeOther. Of(nil) is "".
func Of(err error) Code {
	if err == nil {
		return ""
	}
	var c Coded
	if errors.As(err, &c) {
		return c.FailureCode()
	}
	var se *sdk.Error
	if errors.As(err, &se) {
		if se.Code == "" {
			return CodeOther
		}
		return Code(se.Code)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return CodeTimeout
	case errors.Is(err, context.Canceled):
		return CodeCanceled
	}
	return CodeOther
}

// FromClient classifies an error returned by the MCP engine for a request
// on a live session, where it enters the host (host/session.Classify,
// which first marks a -32601 answer CodeMethodNotFound). An error that
// carries a code keeps it: the transport's failures do (the engine wraps
// the plugin's *sdk.Error, or the end of the request's context). Any other
// error is the server's own JSON-RPC error answer (or an answer the engine
// could not use): CodeRefused. The message is unchanged; a nil err stays
// nil.
func FromClient(err error) error {
	if err == nil {
		return nil
	}
	var c Coded
	var se *sdk.Error
	if errors.As(err, &c) || errors.As(err, &se) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	return Wrap(CodeRefused, err)
}

// Retry reports whether a failed connect is worth retrying with backoff:
// not when only the user can fix it (a login, credentials, a missing
// executable, an unusable or disabled entry).
func Retry(err error) bool {
	switch Of(err) {
	case CodeAuth, CodeLoginNeeded, CodeNotFound, CodeConfig, CodeDisabled, CodeUnknownServer:
		return false
	}
	return true
}

// Closed reports a connection that is gone (the server exited, the stream
// broke, the plugin died).
func Closed(err error) bool { return Of(err) == CodeClosed }

// Reconnect reports a failure a new session fixes: the server no longer
// knows the session, or the connection broke under a request whose caller
// has not given up.
func Reconnect(err error) bool {
	switch Of(err) {
	case CodeSessionExpired:
		return true
	case CodeClosed:
		return !errors.Is(err, context.Canceled)
	}
	return false
}

// NeedsLogin reports a failure only credentials fix: the server refused
// the request without them (CodeAuth), or only an interactive login can
// give them (CodeLoginNeeded).
func NeedsLogin(err error) bool {
	c := Of(err)
	return c == CodeAuth || c == CodeLoginNeeded
}

// Filtered reports a tool the server offers that its tools.include/exclude
// removes.
func Filtered(err error) bool { return Of(err) == CodeFiltered }

// NotFound reports that what was asked for does not exist: no such tool,
// no such server, or the server's executable is missing.
func NotFound(err error) bool {
	switch Of(err) {
	case CodeNoSuchTool, CodeUnknownServer, CodeNotFound:
		return true
	}
	return false
}

// Timeout reports a failure for want of an answer in time.
func Timeout(err error) bool { return Of(err) == CodeTimeout }

// Interrupted reports a call its caller gave up on.
func Interrupted(err error) bool { return Of(err) == CodeCanceled }

// Answered reports a request the server answered with a JSON-RPC error:
// the server is alive and read the request (CodeMethodNotFound,
// CodeRefused; see FromClient).
func Answered(err error) bool {
	c := Of(err)
	return c == CodeMethodNotFound || c == CodeRefused
}
