package main

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// maxHostState bounds LoginOptions.State, and maxHostCallback the
// redirect URL a host hands back.
const (
	maxHostState    = 4 << 10
	maxHostCallback = 16 << 10
)

// hostCallbackLogin is a login through the host's own callback
// (LoginOptions.RedirectURI), in two calls that may reach two processes:
// the first returns the authorization URL (Status.Pending), the second
// (with Callback) exchanges the code. Nothing is kept between them but
// the files of the token folder (the client registered for RedirectURI,
// the discovery): the PKCE verifier is derived from the host's state with
// the folder's seal key.
func (a *authenticator) hostCallbackLogin(ctx context.Context, o auth.LoginOptions) (auth.Status, error) {
	if a.pkceKey == nil {
		return auth.Status{}, sdk.NewError(sdk.CodeConfig, "a login of '%s' through the host's callback needs a sealed token folder (auth.Config.Seal)", a.cfg.Server)
	}
	if o.State == "" || len(o.State) > maxHostState {
		return auth.Status{}, sdk.NewError(sdk.CodeContract, "a login through the host's callback needs a state of 1 to %d bytes", maxHostState)
	}
	if u, err := url.Parse(o.RedirectURI); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return auth.Status{}, sdk.NewError(sdk.CodeContract, "the host's redirect URI is not an http(s) URL")
	}
	verifier := a.hostVerifier(o.State)
	if o.Callback == "" {
		challenge := o.Challenge
		if len(challenge) == 0 {
			challenge = a.probe(ctx)
		}
		d, err := a.discovery(ctx, challenge, true)
		if err != nil {
			return auth.Status{}, err
		}
		if d.meta.AuthorizationEndpoint == "" {
			return auth.Status{}, sdk.NewError(sdk.CodeAuth, "the authorization server of '%s' has no authorization endpoint", a.cfg.Server)
		}
		scope := a.scopeFor(d, o.Scope)
		c, err := a.loginClient(ctx, d, o.RedirectURI, scope)
		if err != nil {
			return auth.Status{}, err
		}
		// The second step reads the discovery from the folder.
		a.saveMeta(d)
		st := a.localStatus()
		st.Pending = &auth.PendingLogin{URL: a.authorizationURL(d, c, o.RedirectURI, o.State, verifier, scope)}
		return st, nil
	}
	if len(o.Callback) > maxHostCallback {
		return auth.Status{}, sdk.NewError(sdk.CodeAuth, "login to '%s': the redirect URL is over %d bytes", a.cfg.Server, maxHostCallback)
	}
	cb, err := url.Parse(o.Callback)
	if err != nil {
		return auth.Status{}, sdk.NewError(sdk.CodeAuth, "login to '%s': the redirect URL does not parse", a.cfg.Server)
	}
	d, err := a.discovery(ctx, nil, false)
	if err != nil {
		return auth.Status{}, err
	}
	scope := a.scopeFor(d, o.Scope)
	c, err := a.loginClient(ctx, d, o.RedirectURI, scope)
	if err != nil {
		return auth.Status{}, err
	}
	t, err := a.exchange(ctx, d, c, cb.Query(), o.State, o.RedirectURI, verifier)
	if err != nil {
		return auth.Status{}, err
	}
	return a.keep(ctx, d, t, scope)
}

// hostVerifier is the PKCE verifier of the login with state: 32 bytes of
// HMAC-SHA256 under the folder's PKCE key, base64url (43 characters, RFC
// 7636's minimum). Without the key, state (which travels through the
// browser) tells nothing of it.
func (a *authenticator) hostVerifier(state string) string {
	m := hmac.New(sha256.New, a.pkceKey)
	m.Write([]byte(state))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// pkceKeyOf derives the key of hostVerifier from the folder's seal key.
func pkceKeyOf(seal []byte) ([]byte, error) {
	return hkdf.Key(sha256.New, seal, nil, "hermes oauth host-callback pkce v1", 32)
}
