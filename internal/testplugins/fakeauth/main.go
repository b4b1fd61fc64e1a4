// Command hermes-auth-fake is a test auth plugin (auth: fake) that logs in
// the way the OAuth plugin does, without an authorization server: it opens
// a URL through the host's UI pointing at a loopback callback of its own,
// and takes the code from that callback or from a line the user pastes,
// whichever comes first. A good code stores the configured token. Every
// call is appended to a record file, so tests see what the host asked and
// whether a UI was offered; a token never appears in it, nor in any error.
//
// Settings (the fake: block of the server entry):
//
//	token      the bearer token a login stores (default "fake-token")
//	code       the code that completes a login (default "fake-code-123")
//	account    reported after a login (default "tester@example.com")
//	scope      granted scope (default "mcp:read"; --scope replaces it)
//	lifetime   seconds a token lasts (default 3600; <= 0: already expired)
//	revoke     logout reports a revocation
//	record     file to append one line per call to
//	fail_login a login fails with this message
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
)

func main() {
	// auth.Serve closes the message socket the host passes: an auth plugin
	// has none.
	auth.Serve(func(_ context.Context, cfg auth.Config) (auth.Authenticator, error) {
		return open(cfg)
	})
}

type settings struct {
	Token     string  `json:"token"`
	Code      string  `json:"code"`
	Account   string  `json:"account"`
	Scope     string  `json:"scope"`
	Lifetime  float64 `json:"lifetime"`
	Revoke    bool    `json:"revoke"`
	Record    string  `json:"record"`
	FailLogin string  `json:"fail_login"`
}

// stored is the token file.
type stored struct {
	Token     string `json:"token"`
	Account   string `json:"account"`
	Scope     string `json:"scope"`
	ExpiresAt int64  `json:"expires_at"`
	Obtained  int64  `json:"obtained_at"`
}

type fake struct {
	cfg auth.Config
	set settings
	mu  sync.Mutex
}

func open(cfg auth.Config) (*fake, error) {
	set := settings{Token: "fake-token", Code: "fake-code-123", Account: "tester@example.com", Scope: "mcp:read", Lifetime: 3600}
	if cfg.Settings != nil {
		b, _ := json.Marshal(cfg.Settings)
		if err := json.Unmarshal(b, &set); err != nil {
			return nil, sdk.NewError(sdk.CodeConfig, "fake: %v", err)
		}
	}
	if set.Token == "" {
		return nil, sdk.NewError(sdk.CodeConfig, "fake.token: empty; set the token a login stores")
	}
	f := &fake{cfg: cfg, set: set}
	f.record("open server=%s url=%s", cfg.Server, cfg.URL)
	return f, nil
}

func (f *fake) record(format string, args ...any) {
	if f.set.Record == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fh, err := os.OpenFile(f.set.Record, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintf(fh, format+"\n", args...)
	fh.Close()
}

func (f *fake) files() []string {
	stem := filepath.Join(f.cfg.TokenDir, auth.FileStem(f.cfg.Server))
	return []string{stem + ".json", stem + ".client.json"}
}

func (f *fake) load() *stored {
	b, err := os.ReadFile(f.files()[0])
	if err != nil {
		return nil
	}
	var s stored
	if json.Unmarshal(b, &s) != nil || s.Token == "" {
		return nil
	}
	return &s
}

func (f *fake) Headers(_ context.Context, _ auth.HeadersRequest) (auth.Headers, error) {
	s := f.load()
	f.record("headers stored=%v", s != nil)
	if s == nil {
		return auth.Headers{}, nil
	}
	if s.ExpiresAt <= time.Now().Unix() {
		return auth.Headers{}, auth.LoginNeeded(f.cfg.Server, "the token expired")
	}
	return auth.Headers{Headers: map[string]string{"Authorization": "Bearer " + s.Token}}, nil
}

func (f *fake) Challenge(_ context.Context, c auth.Challenge, ui auth.UI) (auth.Answer, error) {
	f.record("challenge status=%d interactive=%v", c.Status, ui.Interactive())
	if f.load() == nil {
		return auth.Answer{}, auth.LoginNeeded(f.cfg.Server, "no token is stored")
	}
	return auth.Answer{}, auth.LoginNeeded(f.cfg.Server, "the server refused the stored token")
}

func (f *fake) Login(ctx context.Context, o auth.LoginOptions, ui auth.UI) (auth.Status, error) {
	f.record("login no_browser=%v device=%v scope=%q interactive=%v", o.NoBrowser, o.Device, o.Scope, ui.Interactive())
	if !ui.Interactive() {
		return auth.Status{}, auth.LoginNeeded(f.cfg.Server, "no user is here to log in")
	}
	if f.set.FailLogin != "" {
		return auth.Status{}, sdk.NewError(sdk.CodeAuth, "%s", f.set.FailLogin)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return auth.Status{}, err
	}
	codes := make(chan string, 2)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "Logged in; you can close this tab.")
		codes <- r.URL.Query().Get("code")
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	link := fmt.Sprintf("http://%s/callback?code=%s", ln.Addr(), url.QueryEscape(f.set.Code))

	switch {
	case o.Device:
		if err := ui.Show(ctx, auth.Notice{Text: "To log in, visit this URL and enter the code:", URL: link, UserCode: "ABCD-1234"}); err != nil {
			return auth.Status{}, err
		}
	case !o.NoBrowser:
		err := ui.OpenURL(ctx, link)
		f.record("open_url error=%v", err)
		if err == nil {
			_ = ui.Show(ctx, auth.Notice{Text: "Opened your browser. If it did not open, visit:", URL: link})
			break
		}
		fallthrough
	default:
		if err := ui.Show(ctx, auth.Notice{Text: "Open this URL in a browser,\nthen paste the code it shows here.", URL: link}); err != nil {
			return auth.Status{}, err
		}
	}
	askCtx, stopAsk := context.WithCancel(ctx)
	defer stopAsk()
	go func() {
		line, err := ui.Ask(askCtx, "Paste the code (or 'skip'):")
		if err != nil {
			f.record("ask error=%v", err)
			return
		}
		codes <- strings.TrimSpace(line)
	}()
	var code string
	select {
	case code = <-codes:
	case <-ctx.Done():
		return auth.Status{}, sdk.NewError(sdk.CodeTimeout, "no code arrived for '%s'", f.cfg.Server)
	}
	f.record("code_received")
	if code == "skip" {
		return auth.Status{}, errors.New("login cancelled")
	}
	if code != f.set.Code {
		return auth.Status{}, sdk.NewError(sdk.CodeAuth, "login to '%s': wrong code", f.cfg.Server)
	}
	scope := f.set.Scope
	if o.Scope != "" {
		scope = o.Scope
	}
	now := time.Now()
	s := stored{Token: f.set.Token, Account: f.set.Account, Scope: scope, Obtained: now.Unix(),
		ExpiresAt: now.Add(time.Duration(f.set.Lifetime * float64(time.Second))).Unix()}
	if err := os.MkdirAll(f.cfg.TokenDir, 0o700); err != nil {
		return auth.Status{}, err
	}
	b, _ := json.Marshal(s)
	if err := os.WriteFile(f.files()[0], b, 0o600); err != nil {
		return auth.Status{}, err
	}
	if err := os.WriteFile(f.files()[1], []byte(`{"client_id":"fake"}`), 0o600); err != nil {
		return auth.Status{}, err
	}
	return f.Status(ctx)
}

func (f *fake) Logout(context.Context) (auth.LogoutResult, error) {
	f.record("logout")
	r := auth.LogoutResult{}
	if f.load() != nil && f.set.Revoke {
		r.Revoked = true
	}
	for _, p := range f.files() {
		if os.Remove(p) == nil {
			r.Removed++
		}
	}
	return r, nil
}

func (f *fake) Status(context.Context) (auth.Status, error) {
	f.record("status")
	st := auth.Status{Method: "fake", Issuer: "fake authorization server"}
	s := f.load()
	if s == nil {
		return st, nil
	}
	st.LoggedIn = true
	st.Account = s.Account
	st.Scopes = strings.Fields(s.Scope)
	st.ExpiresAt = time.Unix(s.ExpiresAt, 0)
	st.LastRefresh = time.Unix(s.Obtained, 0)
	st.Detail = "client: fake"
	return st, nil
}
