package pluginhost_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/sdktest"
)

// fake is an Authenticator whose Login asks the UI for a line, and whose
// Challenge reports whether it got an interactive UI.
type fake struct {
	cfg      auth.Config
	loginCtx chan context.Context
	block    bool
}

func (f *fake) Headers(_ context.Context, req auth.HeadersRequest) (auth.Headers, error) {
	if req.Method == "FAIL" {
		return auth.Headers{}, auth.LoginNeeded(f.cfg.Server, "no token stored")
	}
	return auth.Headers{Headers: map[string]string{"Authorization": "Bearer t-" + req.Method}, ValidUntil: time.Unix(1e9, 0)}, nil
}

func (f *fake) Challenge(ctx context.Context, c auth.Challenge, ui auth.UI) (auth.Answer, error) {
	if !ui.Interactive() {
		if _, err := ui.Ask(ctx, "x"); !errors.Is(err, auth.ErrNotInteractive) {
			return auth.Answer{}, errors.New("a non-interactive UI answered")
		}
		return auth.Answer{}, auth.LoginNeeded(f.cfg.Server, "more scope wanted")
	}
	return auth.Answer{Retry: c.Status == 403 && c.WWWAuthenticate[0] == `Bearer error="insufficient_scope"`}, nil
}

func (f *fake) Login(ctx context.Context, o auth.LoginOptions, ui auth.UI) (auth.Status, error) {
	if f.block {
		f.loginCtx <- ctx
		<-ctx.Done()
		return auth.Status{}, ctx.Err()
	}
	if err := ui.OpenURL(ctx, "https://as.example/authorize"); !errors.Is(err, auth.ErrNoBrowser) {
		return auth.Status{}, errors.New("OpenURL did not carry ErrNoBrowser")
	}
	if err := ui.Show(ctx, auth.Notice{Text: "visit", URL: "https://as.example/device", UserCode: "ABCD"}); err != nil {
		return auth.Status{}, err
	}
	// The first prompt is abandoned (as when the callback arrives first);
	// the second is answered.
	actx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _, _ = ui.Ask(actx, "abandoned"); close(done) }()
	cancel()
	<-done
	line, err := ui.Ask(ctx, "paste")
	if err != nil {
		return auth.Status{}, err
	}
	return auth.Status{Method: "fake", LoggedIn: true, Account: line, Scopes: []string{o.Scope}}, nil
}

func (f *fake) Logout(context.Context) (auth.LogoutResult, error) {
	return auth.LogoutResult{Revoked: true, Removed: 3}, nil
}

func (f *fake) Status(context.Context) (auth.Status, error) {
	return auth.Status{Method: "fake", Issuer: f.cfg.URL}, nil
}

// ui is a host UI: no browser, records notices, answers prompts from a
// channel, and reports abandoned prompts.
type ui struct {
	notices   chan auth.Notice
	answers   chan string
	abandoned chan string
}

func (u *ui) Interactive() bool                           { return true }
func (u *ui) OpenURL(context.Context, string) error       { return auth.ErrNoBrowser }
func (u *ui) Show(_ context.Context, n auth.Notice) error { u.notices <- n; return nil }
func (u *ui) Ask(ctx context.Context, prompt string) (string, error) {
	if prompt == "abandoned" {
		<-ctx.Done()
		u.abandoned <- prompt
		return "", ctx.Err()
	}
	return <-u.answers, nil
}

func open(t *testing.T, f *fake, u auth.UI) *pluginhost.AuthClient {
	t.Helper()
	h := sdktest.AuthInProcess(t, func(_ context.Context, cfg auth.Config) (auth.Authenticator, error) {
		if cfg.Server == "" {
			return nil, sdk.NewError(sdk.CodeConfig, "no server")
		}
		f.cfg = cfg
		return f, nil
	})
	c, err := h.Open(context.Background(), auth.Config{Server: "linear", URL: "https://mcp.example/mcp", Method: "fake"}, pluginhost.AuthOptions{UI: u})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every call crosses the process boundary with its values and error codes.
func TestCallsRoundTrip(t *testing.T) {
	c := open(t, &fake{}, nil)
	ctx := context.Background()
	h, err := c.Headers(ctx, auth.HeadersRequest{Method: "POST"})
	if err != nil || h.Headers["Authorization"] != "Bearer t-POST" || !h.ValidUntil.Equal(time.Unix(1e9, 0)) {
		t.Fatalf("Headers = %+v, %v", h, err)
	}
	_, err = c.Headers(ctx, auth.HeadersRequest{Method: "FAIL"})
	if sdk.ErrorCode(err) != sdk.CodeLoginNeeded {
		t.Fatalf("Headers error = %v", err)
	}
	// A host with no UI gives the plugin a non-interactive one, even when
	// the call asks for interaction.
	_, err = c.Challenge(ctx, auth.Challenge{Status: 401}, true)
	if sdk.ErrorCode(err) != sdk.CodeLoginNeeded || err.Error() != "MCP server 'linear' needs a login: more scope wanted; run: hermes mcp login linear" {
		t.Fatalf("Challenge error = %v", err)
	}
	st, err := c.Status(ctx)
	if err != nil || st.Issuer != "https://mcp.example/mcp" {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	r, err := c.Logout(ctx)
	if err != nil || !r.Revoked || r.Removed != 3 {
		t.Fatalf("Logout = %+v, %v", r, err)
	}
}

// Login drives the host's UI: the sentinel errors survive the trip, a
// notice arrives whole, an abandoned prompt is ended on the host, and the
// answered one comes back.
func TestLoginThroughTheHostUI(t *testing.T) {
	u := &ui{notices: make(chan auth.Notice, 1), answers: make(chan string, 1), abandoned: make(chan string, 1)}
	c := open(t, &fake{}, u)
	u.answers <- "alice"
	st, err := c.Login(context.Background(), auth.LoginOptions{Scope: "mcp:read"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Account != "alice" || st.Scopes[0] != "mcp:read" {
		t.Fatalf("status = %+v", st)
	}
	if n := <-u.notices; n.UserCode != "ABCD" || n.URL != "https://as.example/device" {
		t.Fatalf("notice = %+v", n)
	}
	if p := <-u.abandoned; p != "abandoned" {
		t.Fatalf("abandoned = %q", p)
	}
	ans, err := c.Challenge(context.Background(), auth.Challenge{Status: 403, WWWAuthenticate: []string{`Bearer error="insufficient_scope"`}}, true)
	if err != nil || !ans.Retry {
		t.Fatalf("interactive Challenge = %+v, %v", ans, err)
	}
}

// Cancelling the host's context cancels the plugin's call.
func TestCancelReachesThePlugin(t *testing.T) {
	f := &fake{block: true, loginCtx: make(chan context.Context, 1)}
	c := open(t, f, &ui{})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.Login(ctx, auth.LoginOptions{}); errc <- err }()
	pctx := <-f.loginCtx
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Login after cancel = %v", err)
	}
	<-pctx.Done()
}

// An open error keeps its code.
func TestAuthOpenError(t *testing.T) {
	h := sdktest.AuthInProcess(t, func(context.Context, auth.Config) (auth.Authenticator, error) {
		return nil, sdk.NewError(sdk.CodeConfig, "oauth.redirect_port: not a port")
	})
	_, err := h.Open(context.Background(), auth.Config{Server: "x"}, pluginhost.AuthOptions{})
	if sdk.ErrorCode(err) != sdk.CodeConfig {
		t.Fatalf("open error = %v", err)
	}
}

func TestFileStem(t *testing.T) {
	for in, want := range map[string]string{"linear": "linear", "a_b-c": "a_b-c", "../x": "%2E%2E%2Fx", "": "%", "a b": "a%20b"} {
		if got := auth.FileStem(in); got != want {
			t.Errorf("FileStem(%q) = %q, want %q", in, got, want)
		}
	}
}
