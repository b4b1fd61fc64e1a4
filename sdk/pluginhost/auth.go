package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/rpc"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/internal/rpcx"
	aw "github.com/hermes-agent/hermes/sdk/internal/wire/authwire"
)

// AuthPlugin is the host's go-plugin glue of the auth kind: put it in the
// plugin set under sdk.KindAuth, and Dispense returns an *Auth.
type AuthPlugin struct{}

// Server is the plugin's side: not served by a host.
func (AuthPlugin) Server(*plugin.MuxBroker) (any, error) {
	return nil, sdk.NewError(sdk.CodeContract, "a host does not serve the auth kind")
}

// Client returns the host-side handle, an *Auth.
func (AuthPlugin) Client(b *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return &Auth{client: c, broker: b}, nil
}

// Auth is the host's handle on a dispensed auth plugin; Open it once.
type Auth struct {
	client *rpc.Client
	broker *plugin.MuxBroker
}

// DefaultUITimeout bounds one UI callback (and so one prompt) when
// neither AuthOptions.UITimeout nor auth.Config.LoginTimeout is set.
const DefaultUITimeout = 5 * time.Minute

// AuthOptions configures the host side of an opened auth plugin. The UI
// is given once, when the client is opened, as TransportOptions carries a
// transport's host callbacks; each call says whether it may use it.
type AuthOptions struct {
	// UI answers the plugin's interactive steps during calls made with
	// interactive set (Login always); nil is auth.NoUI (no user).
	UI auth.UI
	// UITimeout bounds one UI callback (and so one prompt); default
	// auth.Config.LoginTimeout, else DefaultUITimeout.
	UITimeout time.Duration
}

// Open builds the plugin's Authenticator for cfg; opts carries the host's
// UI. Every kind opens alike: Open(ctx, cfg, options).
func (h *Auth) Open(ctx context.Context, cfg auth.Config, opts AuthOptions) (*AuthClient, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode auth config of %q: %w", cfg.Server, err)
	}
	ui := opts.UI
	if ui == nil {
		ui = auth.NoUI{}
	}
	timeout := opts.UITimeout
	if timeout <= 0 {
		timeout = cfg.LoginTimeout
	}
	if timeout <= 0 {
		timeout = DefaultUITimeout
	}
	c := &AuthClient{rpc: rpcx.NewClient(h.client, fmt.Sprintf("auth plugin of %q", cfg.Server))}
	c.rpc.Interactive = ui.Interactive
	id := rpcx.ServeCallbacks(h.broker, &uiCallbacks{ui: ui, timeout: timeout})
	var reply aw.OpenReply
	if err := c.rpc.Call(ctx, aw.MethodOpen, &aw.OpenArgs{Config: raw, CallbackID: id}, &reply); err != nil {
		return nil, err
	}
	if cfg.Seal != nil && !reply.Sealed {
		// A plugin that does not seal (one built before sealing ignores
		// the field) would write the tokens in the clear.
		return nil, sdk.NewError(sdk.CodeContract, "the auth plugin of %q does not seal its files (auth.Config.Seal), which this host needs of it; update the plugin (it may predate sealing)", cfg.Server)
	}
	return c, nil
}

// AuthClient is the host's side of one opened Authenticator. Its methods
// mirror auth.Authenticator's; ctx ends a call (the plugin's context is
// cancelled too).
type AuthClient struct {
	rpc *rpcx.Client
}

// Headers asks for the headers of one request.
func (c *AuthClient) Headers(ctx context.Context, req auth.HeadersRequest) (auth.Headers, error) {
	var reply aw.HeadersReply[auth.Headers]
	err := c.rpc.Call(ctx, aw.MethodHeaders, &aw.HeadersArgs[auth.HeadersRequest]{Req: req}, &reply)
	return reply.Headers, err
}

// Challenge hands the plugin a challenge; interactive lets it use the UI
// (a step-up login) when the UI has a user. The answer holds the headers
// to retry with.
func (c *AuthClient) Challenge(ctx context.Context, ch auth.Challenge, interactive bool) (auth.Answer, error) {
	var reply aw.ChallengeReply[auth.Answer]
	err := c.rpc.Call(ctx, aw.MethodChallenge, &aw.ChallengeArgs[auth.Challenge]{Call: rpcx.Call{Interactive: interactive}, Challenge: ch}, &reply)
	return reply.Answer, err
}

// Login logs in through the UI.
func (c *AuthClient) Login(ctx context.Context, o auth.LoginOptions) (auth.Status, error) {
	var reply aw.StatusReply[auth.Status]
	err := c.rpc.Call(ctx, aw.MethodLogin, &aw.LoginArgs[auth.LoginOptions]{Call: rpcx.Call{Interactive: true}, Options: o}, &reply)
	return reply.Status, err
}

// Logout revokes and deletes the credentials.
func (c *AuthClient) Logout(ctx context.Context) (auth.LogoutResult, error) {
	var reply aw.LogoutReply[auth.LogoutResult]
	err := c.rpc.Call(ctx, aw.MethodLogout, &rpcx.Call{}, &reply)
	return reply.Result, err
}

// Status describes the stored credentials.
func (c *AuthClient) Status(ctx context.Context) (auth.Status, error) {
	var reply aw.StatusReply[auth.Status]
	err := c.rpc.Call(ctx, aw.MethodStatus, &rpcx.Call{}, &reply)
	return reply.Status, err
}

// uiCallbacks is the host's callback receiver: it relays an auth plugin's
// interactive steps to the host's UI, each bounded by timeout and ended
// early when the plugin cancels it (a prompt no longer needed).
type uiCallbacks struct {
	ui      auth.UI
	timeout time.Duration
	calls   rpcx.Calls
}

// bounded runs f within the callback's bound.
func (h *uiCallbacks) bounded(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	return uiError(f(ctx))
}

// OpenURL relays UI.OpenURL.
func (h *uiCallbacks) OpenURL(args aw.URLArgs, reply *rpcx.ErrReply) error {
	return rpcx.Do(&h.calls, &args, &reply.Err, func(ctx context.Context) error {
		return h.bounded(ctx, func(ctx context.Context) error { return h.ui.OpenURL(ctx, args.URL) })
	})
}

// Show relays UI.Show.
func (h *uiCallbacks) Show(args aw.NoticeArgs[auth.Notice], reply *rpcx.ErrReply) error {
	return rpcx.Do(&h.calls, &args, &reply.Err, func(ctx context.Context) error {
		return h.bounded(ctx, func(ctx context.Context) error { return h.ui.Show(ctx, args.Notice) })
	})
}

// Ask relays UI.Ask until a line comes, the bound passes or the plugin
// cancels the prompt.
func (h *uiCallbacks) Ask(args aw.AskArgs, reply *aw.AskReply) error {
	return rpcx.Run(&h.calls, &args, &reply.Line, &reply.Err, func(ctx context.Context) (line string, err error) {
		err = h.bounded(ctx, func(ctx context.Context) (err error) { line, err = h.ui.Ask(ctx, args.Prompt); return err })
		return line, err
	})
}

// Cancel ends a pending callback.
func (h *uiCallbacks) Cancel(args rpcx.CancelArgs, _ *rpcx.ErrReply) error {
	h.calls.Cancel(args.ID)
	return nil
}

// uiError is err for the wire: auth.ErrNotInteractive and auth.ErrNoBrowser
// keep their identity.
func uiError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, auth.ErrNotInteractive):
		return &sdk.Error{Code: aw.CodeNotInteractive, Message: err.Error()}
	case errors.Is(err, auth.ErrNoBrowser):
		return &sdk.Error{Code: aw.CodeNoBrowser, Message: err.Error()}
	}
	return err
}
