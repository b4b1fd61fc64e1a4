package transport

import (
	"context"
	"net/http"

	"github.com/hermes-agent/hermes/sdk"
)

// Conn is a plugin's connection to one MCP server.
type Conn interface {
	// Read returns the next message from the server: one JSON-RPC message
	// (a response, a notification or a request of the server's own). The
	// slice is only valid until the next Read. Read is called from one
	// goroutine. It returns an error when the connection has ended; the
	// error says why (an *sdk.Error with CodeClosed, CodeAuth...).
	Read(ctx context.Context) ([]byte, error)
	// Write sends one message to the server. Messages are written in the
	// order the host wrote them, from one goroutine, unless the Conn
	// implements Concurrent. ctx ends when the host cancels the request
	// the message carries or the connection closes. An error fails the
	// host's request the message carries, with the error's code.
	Write(ctx context.Context, msg []byte) error
	// Close ends the connection gracefully (a local server: stdin closed,
	// then SIGTERM, then SIGKILL, each after a grace). It is called once.
	Close() error
	// SessionID returns the transport's session id (HTTP), or "". It must
	// be cheap and safe to call from any goroutine.
	SessionID() string
}

// Concurrent is implemented by a Conn whose Write blocks for the exchange a
// message starts (an HTTP POST and its response): each Write then runs in
// its own goroutine, and ctx is cancelled when the host cancels that
// message's request.
type Concurrent interface {
	ConcurrentWrites() bool
}

// Borrower is implemented by a Conn whose Write is done with msg when it
// returns (it copies what it keeps, as an io.Writer must), and that does
// not look at MessageHeader(ctx) after it either. The sdk then hands it
// the host's messages in memory it reuses for the next one, instead of a
// new slice each (an allocation per message that the plugin's heap grows
// with until its first collection). A Concurrent Conn's writes overlap, so
// it never borrows.
type Borrower interface {
	BorrowsMessages() bool
}

// Properties describe a connection to the host.
type Properties struct {
	// HTTP is true when the connection speaks MCP over HTTP: the host then
	// tells it the negotiated protocol version, and does not send
	// notifications/cancelled when a request is cancelled (ending the
	// request's exchange is the cancellation).
	HTTP bool
	// LegacyOnly is true when only protocol revisions before 2026-07-28
	// work over this connection.
	LegacyOnly bool
	// Sandbox says what isolation the server runs under; nil when none
	// was asked for or the transport cannot sandbox.
	Sandbox *SandboxReport
}

// Describer is implemented by a Conn with Properties other than the zero
// value.
type Describer interface {
	Properties() Properties
}

// VersionSetter is implemented by a Conn that needs the negotiated protocol
// version (HTTP sends it as a header).
type VersionSetter interface {
	SetProtocolVersion(version string)
}

// Opener connects to the server cfg describes. ctx bounds the connecting
// only (cfg.ConnectTimeout and the host's own bound); a Conn must not keep
// using it afterwards. host lets the Conn call back into the host.
type Opener func(ctx context.Context, cfg Config, host Host) (Conn, error)

// Host is what a transport plugin may ask of the host while it runs.
type Host interface {
	// Headers returns extra headers for one HTTP request to the server
	// (for example Authorization from an auth plugin). Transports call it
	// before each request only when Config.DynamicHeaders is set.
	Headers(ctx context.Context, req HeadersRequest) (map[string]string, error)
	// Challenge hands the host a 401 or 403 answer the server gave to a
	// request made with the host's headers (Config.DynamicHeaders only).
	// The host's auth plugin reads the challenge and refreshes, steps up,
	// or says a login is needed. When the answer's Retry is true, its
	// Headers are the ones to send the request again with (one round trip:
	// no Headers call is needed), at most MaxChallengeRetries times per
	// request. An error (CodeLoginNeeded, CodeAuth) is the one to report
	// for the request. A transport never parses WWW-Authenticate itself.
	Challenge(ctx context.Context, c ChallengeRequest) (ChallengeAnswer, error)
	// Warn tells the host about something the user should know without
	// failing (e.g. a server writing non-JSON to stdout). The host logs it
	// and keeps the last one for its error messages.
	Warn(w *sdk.Error)
}

// HeadersRequest describes the request headers are wanted for.
type HeadersRequest struct {
	Method string
	URL    string
}

// ChallengeRequest is a 401 or 403 answer the server gave to a request.
type ChallengeRequest struct {
	Method string
	URL    string
	// Status is the HTTP status, 401 or 403.
	Status int
	// WWWAuthenticate holds the response's WWW-Authenticate header lines.
	WWWAuthenticate []string
	// Attempt counts the challenges of this one request, from 1.
	Attempt int
	// DPoPNonce is the response's DPoP-Nonce header (RFC 9449 §9), as
	// sent; the auth side reads it. Empty when there is none.
	DPoPNonce string
}

// ChallengeAnswer is the host's answer to a challenge.
type ChallengeAnswer struct {
	// Retry: new credentials are ready; send the request again with
	// Headers.
	Retry bool
	// Headers are the headers for the retry (they replace the ones the
	// host gave for the request, e.g. a new Authorization).
	Headers map[string]string
}

// MaxChallengeRetries is how many times a transport resends one request
// after the host answered a challenge with retry; then the last answer
// stands (so a server that keeps asking for more scope cannot loop).
const MaxChallengeRetries = 3

type headerKey struct{}

// MessageHeader returns the HTTP headers the host attached to the message
// whose Write received ctx (the MCP headers of the current protocol, for
// HTTP transports), or nil.
func MessageHeader(ctx context.Context) http.Header {
	h, _ := ctx.Value(headerKey{}).(http.Header)
	return h
}

func withMessageHeader(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, headerKey{}, h)
}
