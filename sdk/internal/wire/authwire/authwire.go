// Package authwire is the wire of the auth kind: the net/rpc arguments and
// replies of the host's calls into an auth plugin and of the plugin's UI
// callbacks into the host. The plugin side is sdk/auth, the host side
// sdk/pluginhost; value types are sdk/auth's, as type parameters.
package authwire

import (
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/internal/rpcx"
)

// Methods of the plugin (host → plugin); every one also answers
// rpcx.CancelMethod.
const (
	MethodOpen      = "Plugin.Open"
	MethodHeaders   = "Plugin.Headers"
	MethodChallenge = "Plugin.Challenge"
	MethodLogin     = "Plugin.Login"
	MethodLogout    = "Plugin.Logout"
	MethodStatus    = "Plugin.Status"
)

// UI callback methods (plugin → host).
const (
	MethodOpenURL = "Plugin.OpenURL"
	MethodShow    = "Plugin.Show"
	MethodAsk     = "Plugin.Ask"
)

// OpenArgs opens the plugin's Authenticator.
type OpenArgs struct {
	rpcx.Call
	Config []byte // JSON auth.Config
	// CallbackID is the broker id of the host's UI callback server.
	CallbackID uint32
}

// OpenReply answers Open. Hosts and plugins built before Sealed decode
// it as, and send, rpcx.ErrReply: net/rpc's gob matches fields by name,
// so a field one side lacks is ignored by it, and reads as false on the
// other.
type OpenReply struct {
	Err *sdk.Error
	// Sealed: the plugin keeps its files sealed with auth.Config.Seal.
	Sealed bool
}

// Failure returns the plugin's error.
func (r *OpenReply) Failure() *sdk.Error { return r.Err }

// HeadersArgs asks for headers.
type HeadersArgs[R any] struct {
	rpcx.Call
	Req R
}

// HeadersReply carries headers or why there are none.
type HeadersReply[H any] struct {
	Headers H
	Err     *sdk.Error
}

// Failure returns the plugin's error.
func (r *HeadersReply[H]) Failure() *sdk.Error { return r.Err }

// ChallengeArgs hands over a challenge.
type ChallengeArgs[C any] struct {
	rpcx.Call
	Challenge C
}

// ChallengeReply carries the plugin's answer.
type ChallengeReply[A any] struct {
	Answer A
	Err    *sdk.Error
}

// Failure returns the plugin's error.
func (r *ChallengeReply[A]) Failure() *sdk.Error { return r.Err }

// LoginArgs starts a login.
type LoginArgs[O any] struct {
	rpcx.Call
	Options O
}

// StatusReply carries a status (of Login and Status).
type StatusReply[S any] struct {
	Status S
	Err    *sdk.Error
}

// Failure returns the plugin's error.
func (r *StatusReply[S]) Failure() *sdk.Error { return r.Err }

// LogoutReply carries what a logout did.
type LogoutReply[R any] struct {
	Result R
	Err    *sdk.Error
}

// Failure returns the plugin's error.
func (r *LogoutReply[R]) Failure() *sdk.Error { return r.Err }

// URLArgs carries a URL to open.
type URLArgs struct {
	rpcx.Call
	URL string
}

// NoticeArgs carries a notice to show.
type NoticeArgs[N any] struct {
	rpcx.Call
	Notice N
}

// AskArgs carries a prompt.
type AskArgs struct {
	rpcx.Call
	Prompt string
}

// AskReply carries the line the user typed.
type AskReply struct {
	Line string
	Err  *sdk.Error
}

// Failure returns the host's error.
func (r *AskReply) Failure() *sdk.Error { return r.Err }

// UI error codes on the wire: auth.ErrNotInteractive and auth.ErrNoBrowser.
const (
	CodeNotInteractive = "not_interactive"
	CodeNoBrowser      = "no_browser"
)
