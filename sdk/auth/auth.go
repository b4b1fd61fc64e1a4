package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/hermes-agent/hermes/sdk"
)

// Config is everything an auth plugin learns about the server it
// authenticates to. The host has already resolved ${VAR}s.
type Config struct {
	// Server is the name of the server entry in config.yaml.
	Server string `json:"server"`
	// Method is the entry's auth: value ("oauth", "exec" or a third-party
	// name); the plugin is hermes-auth-<Method>.
	Method string `json:"method"`
	// URL is the MCP server's URL (the protected resource); empty for a
	// local server.
	URL string `json:"url,omitempty"`
	// TokenDir is the folder for the plugin's files ($HERMES_HOME/
	// mcp-tokens, mode 0700), each named after FileStem(Server).
	TokenDir string `json:"token_dir"`
	// Settings is the entry's block named after the method (oauth: for
	// "oauth", exec: for "exec"), ${VAR}s resolved; nil when absent.
	Settings map[string]any `json:"settings,omitempty"`
	// TLS settings of the server, which the plugin applies to the
	// authorization server too.
	InsecureSkipVerify bool   `json:"insecure_skip_verify,omitempty"`
	CABundle           string `json:"ca_bundle,omitempty"`
	// LoginTimeout bounds one interactive login (oauth.timeout).
	LoginTimeout time.Duration `json:"login_timeout,omitempty"`
	// Seal, when set, asks the plugin to keep every file it writes in
	// TokenDir sealed (encrypted and authenticated) with Seal.Key, and to
	// refuse a file that does not open with it: a gateway keeps each
	// person's tokens so. A plugin that honours it implements Sealer and
	// says so when it is opened; the host refuses a plugin that does not
	// (one built before sealing would write the files in the clear). nil:
	// the files as they always were (a person's own machine).
	Seal *Seal `json:"seal,omitempty"`
}

// Seal is the key an auth plugin seals its files with (Config.Seal). It
// prints (fmt %v, %+v, %#v) without the key.
type Seal struct {
	// Key is 32 random bytes, this token folder's own: the host derives
	// one per folder from the deployment's secret, so that a plugin holds
	// the key of its own folder only.
	Key []byte `json:"key"`
}

// SealKeySize is the size of Seal.Key.
const SealKeySize = 32

// String describes s without its key: a fingerprint that tells two keys
// apart and nothing more.
func (s Seal) String() string {
	sum := sha256.Sum256(append([]byte("hermes seal fingerprint\x00"), s.Key...))
	return fmt.Sprintf("auth.Seal{key: %d bytes, fingerprint %x}", len(s.Key), sum[:4])
}

// GoString is String, so that %#v does not print the key either.
func (s Seal) GoString() string { return s.String() }

// Sealer is implemented by an Authenticator that honours Config.Seal.
// The plugin's side of the contract asks it when the host opens it with a
// Seal, and tells the host (an older plugin, which cannot, is refused).
type Sealer interface {
	// Sealed reports whether the Authenticator keeps its files sealed
	// with the Seal it was opened with.
	Sealed() bool
}

// HeadersRequest describes the request to the server headers are wanted
// for.
type HeadersRequest struct {
	Method string
	URL    string
}

// Headers are the headers for requests to the server.
type Headers struct {
	// Headers to set on the request (e.g. Authorization). Empty when the
	// plugin has no credentials yet: the request then goes out without
	// any, and the server's challenge comes back through Challenge.
	Headers map[string]string
	// ValidUntil lets the host reuse Headers for other requests until
	// then (e.g. the token's expiry less a margin); zero means ask again
	// for every request.
	ValidUntil time.Time
}

// Challenge is a 401 or 403 answer the server gave to a request.
type Challenge struct {
	Method string
	URL    string
	// Status is the HTTP status, 401 or 403.
	Status int
	// WWWAuthenticate holds the response's WWW-Authenticate header lines.
	WWWAuthenticate []string
	// Attempt counts the challenges of one request, from 1.
	Attempt int
	// DPoPNonce is the response's DPoP-Nonce header (RFC 9449 §9): the
	// nonce the server wants in the next proof. Empty when there is none,
	// and from transports that predate it.
	DPoPNonce string
}

// Bearer returns the parameters of the challenge's first Bearer or DPoP challenge
// (ParseBearer of WWWAuthenticate).
func (c Challenge) Bearer() (BearerChallenge, bool) { return ParseBearer(c.WWWAuthenticate...) }

// Answer is what a plugin makes of a challenge.
type Answer struct {
	// Retry: new credentials are ready (refreshed, or a step-up
	// completed); the request is sent again with Headers.
	Retry bool
	// Headers are the new headers, returned with Retry so that a refresh
	// costs the transport one round trip. When a plugin leaves them empty
	// with Retry, the host asks Headers once more.
	Headers Headers
}

// LoginOptions tune an interactive login.
type LoginOptions struct {
	// NoBrowser: do not open a browser; show the URL instead (and accept
	// the redirect URL pasted back).
	NoBrowser bool
	// Device asks for the device authorization grant (RFC 8628).
	Device bool
	// Challenge holds the WWW-Authenticate lines of the server's last
	// 401/403, when the host saw one (it names the metadata and scope).
	Challenge []string
	// Scope asks for this scope instead of the discovered one.
	Scope string

	// RedirectURI, when set, is a callback the host itself receives the
	// authorization server's answer at (a gateway's /oauth/callback),
	// instead of the plugin's loopback listener; State is the state the
	// host bound to this login, sent as it is. The login then takes two
	// calls, which may reach two processes (two replicas of a gateway):
	// without Callback, Login discovers, registers a client for
	// RedirectURI when it must, and returns at once with Status.Pending,
	// the authorization URL to send the person to; with Callback (the URL
	// the person's browser was redirected to), it checks that its state is
	// State, exchanges the code and stores the tokens. The PKCE verifier
	// is derived from State with the Seal key, so no process keeps it;
	// Config.Seal is required. Plugins that predate these fields ignore
	// them (and return no Pending).
	RedirectURI string
	State       string
	Callback    string
}

// PendingLogin is the first step of a login through a host's callback
// (LoginOptions.RedirectURI).
type PendingLogin struct {
	// URL is the authorization URL to send the person to.
	URL string
}

// Status is what a plugin tells about its credentials: never a token.
type Status struct {
	// Method is the auth method, e.g. "oauth".
	Method string
	// LoggedIn: credentials are stored (they may have expired).
	LoggedIn bool
	// Account is who the credentials are for, when known.
	Account string
	// Scopes granted.
	Scopes []string
	// ExpiresAt is when the current credential expires; zero when unknown
	// or never.
	ExpiresAt time.Time
	// LastRefresh is when the credential was last refreshed or obtained.
	LastRefresh time.Time
	// CanRefresh: an expired credential can be renewed without the user.
	CanRefresh bool
	// Issuer is the authorization server (or the command) the credentials
	// come from.
	Issuer string
	// Detail is one line more, e.g. how the client is registered.
	Detail string
	// Refused: the plugin checked the credentials with the server that
	// issued them (an introspection, a refresh, an authenticated request)
	// and they were refused: expired or revoked there, whatever the
	// clock says. Only a login helps; Detail says what was refused.
	Refused bool
	// Pending is set by the first step of a login through a host's
	// callback (LoginOptions.RedirectURI): nothing is stored yet.
	Pending *PendingLogin
}

// LogoutResult says what a logout did.
type LogoutResult struct {
	// Revoked: the authorization server revoked the tokens (RFC 7009).
	Revoked bool
	// Removed counts the files deleted.
	Removed int
	// Detail is one line more, e.g. why revocation was skipped.
	Detail string
}

// Authenticator is what an auth plugin implements, one per server. Every
// method may be called concurrently with the others.
type Authenticator interface {
	// Headers returns the headers for a request to the server: a cached
	// token, refreshed first when it has expired or is about to. With no
	// credentials at all it returns empty Headers, not an error. A
	// CodeLoginNeeded error says only an interactive login can help.
	Headers(ctx context.Context, req HeadersRequest) (Headers, error)
	// Challenge reacts to a 401 or 403: refresh, step up (ui is
	// interactive only when the user is there to log in), or fail with
	// CodeLoginNeeded naming the command to run.
	Challenge(ctx context.Context, c Challenge, ui UI) (Answer, error)
	// Login logs in through ui; old credentials are kept until new ones
	// have arrived.
	Login(ctx context.Context, o LoginOptions, ui UI) (Status, error)
	// Logout revokes the credentials where the server supports it and
	// deletes them.
	Logout(ctx context.Context) (LogoutResult, error)
	// Status describes the stored credentials. Where it can, it checks
	// them with the server that issued them (Status.Refused), so that a
	// revoked or expired grant is never reported as usable.
	Status(ctx context.Context) (Status, error)
}

// Opener builds the Authenticator of one server. ctx bounds the opening
// only.
type Opener func(ctx context.Context, cfg Config) (Authenticator, error)

// Notice is something the plugin wants the user to see.
type Notice struct {
	// Text is one or a few lines of plain text (the host escapes it).
	Text string
	// URL to visit, shown on a line of its own.
	URL string
	// UserCode is a device code to type at URL.
	UserCode string
}

// UI is the host's terminal, relayed to the plugin. A plugin never reads
// or writes the terminal itself.
type UI interface {
	// Interactive reports whether a user is there to answer; when false,
	// every other method fails with ErrNotInteractive.
	Interactive() bool
	// OpenURL opens url in the user's browser. ErrNoBrowser: none can
	// open here (show the URL instead).
	OpenURL(ctx context.Context, url string) error
	// Show shows a notice.
	Show(ctx context.Context, n Notice) error
	// Ask shows prompt and returns the line the user typed (e.g. a
	// redirect URL pasted back). It ends early, with ctx's error, when ctx
	// ends (the callback arrived first).
	Ask(ctx context.Context, prompt string) (string, error)
}

// ErrNotInteractive is the UI's error when no user is there.
var ErrNotInteractive = errors.New("not interactive: no user to log in")

// ErrNoBrowser is OpenURL's error when no browser can be opened here.
var ErrNoBrowser = errors.New("no browser can be opened here")

// LoginNeeded returns the CodeLoginNeeded error for server, with why (one
// line, no secrets) and the command that fixes it.
func LoginNeeded(server, why string) *sdk.Error {
	return sdk.NewError(sdk.CodeLoginNeeded, "MCP server '%s' needs a login: %s; run: hermes mcp login %s", server, why, server)
}

// NoUI is a UI with no user: background work.
type NoUI struct{}

// Interactive returns false.
func (NoUI) Interactive() bool { return false }

// OpenURL fails with ErrNotInteractive.
func (NoUI) OpenURL(context.Context, string) error { return ErrNotInteractive }

// Show fails with ErrNotInteractive.
func (NoUI) Show(context.Context, Notice) error { return ErrNotInteractive }

// Ask fails with ErrNotInteractive.
func (NoUI) Ask(context.Context, string) (string, error) { return "", ErrNotInteractive }
