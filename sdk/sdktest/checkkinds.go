package sdktest

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/bridge"
	"github.com/hermes-agent/hermes/sdk/model"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
)

// CheckAuth runs an auth plugin's Opener through the auth contract
// in-process, as the host calls it (go-plugin's net/rpc, the UI relayed, no
// user behind it), for the server cfg describes. Each step is a subtest:
//
//   - open: the Opener builds an Authenticator for cfg;
//   - headers: Headers answers, with valid header names and values;
//   - status: Status answers, naming the method, without any token in it;
//   - challenge: a 401 without a user is answered at once: a retry that
//     carries the new headers, or a login_needed or auth error;
//   - logout: Logout answers.
func CheckAuth(t *testing.T, open auth.Opener, cfg auth.Config) {
	t.Helper()
	h := AuthInProcess(t, open)
	ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
	defer cancel()
	c, err := h.Open(ctx, cfg, pluginhost.AuthOptions{})
	if err != nil {
		t.Fatalf("auth plugin: Opener failed for server %q: %v (code %q). Open must build an Authenticator from the Config, without network calls a login would make", cfg.Server, err, sdk.ErrorCode(err))
	}
	req := auth.HeadersRequest{Method: "POST", URL: cfg.URL}
	var secrets []string
	t.Run("headers", func(t *testing.T) {
		hs, err := c.Headers(ctx, req)
		if err != nil {
			if code := sdk.ErrorCode(err); code != sdk.CodeLoginNeeded && code != sdk.CodeAuth {
				t.Fatalf("auth plugin: Headers failed with %v (code %q); with no credentials return empty Headers, and say a login is needed only with auth.LoginNeeded", err, code)
			}
			return
		}
		for k, v := range hs.Headers {
			if err := headerProblem(k, v); err != "" {
				t.Errorf("auth plugin: Headers returned %s", err)
			}
			secrets = append(secrets, v)
		}
	})
	t.Run("status", func(t *testing.T) {
		st, err := c.Status(ctx)
		if err != nil && sdk.ErrorCode(err) != sdk.CodeLoginNeeded {
			t.Fatalf("auth plugin: Status failed with %v (code %q); Status describes what is stored, even when nothing is", err, sdk.ErrorCode(err))
		}
		if st.Method == "" {
			t.Error("auth plugin: Status returned no Method; set it to the auth method's name (e.g. \"oauth\")")
		}
		for _, s := range secrets {
			tok := strings.TrimSpace(strings.TrimPrefix(s, "Bearer "))
			if len(tok) < 8 {
				continue
			}
			for name, f := range map[string]string{"Account": st.Account, "Detail": st.Detail, "Issuer": st.Issuer, "Method": st.Method} {
				if strings.Contains(f, tok) {
					t.Errorf("auth plugin: Status.%s holds the token Headers gave; Status must never show a token", name)
				}
			}
		}
	})
	t.Run("challenge", func(t *testing.T) {
		ans, err := c.Challenge(ctx, auth.Challenge{Method: "POST", URL: cfg.URL, Status: 401, Attempt: 1,
			WWWAuthenticate: []string{`Bearer error="invalid_token"`}}, false)
		switch {
		case err != nil:
			if code := sdk.ErrorCode(err); code != sdk.CodeLoginNeeded && code != sdk.CodeAuth {
				t.Errorf("auth plugin: Challenge without a user failed with %v (code %q); when only a login helps return auth.LoginNeeded(server, why), else a CodeAuth error", err, code)
			}
		case ans.Retry && len(ans.Headers.Headers) == 0:
			t.Error("auth plugin: Challenge answered Retry without Headers; return the new headers with the answer (auth.Answer.Headers), so that a refresh is one round trip")
		case ans.Retry:
			for k, v := range ans.Headers.Headers {
				if err := headerProblem(k, v); err != "" {
					t.Errorf("auth plugin: Challenge's answer holds %s", err)
				}
			}
		}
	})
	t.Run("logout", func(t *testing.T) {
		if _, err := c.Logout(ctx); err != nil && sdk.ErrorCode(err) == sdk.CodeContract {
			t.Errorf("auth plugin: Logout failed with a contract error: %v", err)
		}
	})
}

// headerProblem says what is wrong with one header, or "".
func headerProblem(name, value string) string {
	switch {
	case name == "":
		return "an empty header name"
	case strings.ContainsAny(name, " \t\r\n:"):
		return "the header name " + quote(name) + ", which is not a token (no spaces, colons or line breaks)"
	case strings.ContainsAny(value, "\r\n\x00"):
		return "a value of header " + quote(name) + " with a line break or NUL in it"
	}
	return ""
}

func quote(s string) string { b, _ := json.Marshal(trim(s)); return string(b) }

// CheckBridge runs a bridge plugin's Description and Opener through the
// bridge contract in-process, as the host calls them, over cfg. Each step
// is a subtest:
//
//   - describe: the host accepts the Description (tools named once each,
//     schemas that are JSON objects, within the limits);
//   - open: the Opener builds a Server for cfg;
//   - unknown-tool: a call of a tool not described fails with an error, not
//     a Result;
//   - cancel: a call whose context ends returns.
func CheckBridge(t *testing.T, desc bridge.Description, open bridge.Opener, cfg bridge.Config) {
	t.Helper()
	h := BridgeInProcess(t, desc, open)
	ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
	defer cancel()
	ok := t.Run("describe", func(t *testing.T) {
		if _, err := h.Describe(ctx); err != nil {
			t.Fatalf("%v; fix the Description given to bridge.Serve", err)
		}
	})
	if !ok {
		return
	}
	c, err := h.Open(ctx, cfg, pluginhost.BridgeOptions{})
	if err != nil {
		t.Fatalf("bridge plugin: Opener failed: %v (code %q). Open must build a Server from the Config", err, sdk.ErrorCode(err))
	}
	t.Run("unknown-tool", func(t *testing.T) {
		res, err := c.Call(ctx, "sdktest_no_such_tool", json.RawMessage(`{}`))
		if err == nil {
			t.Errorf("bridge plugin: a call of a tool it does not describe returned %+v; return an error (e.g. sdk.NewError(sdk.CodeConfig, \"unknown tool %%q\", name))", res)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		cctx, ccancel := context.WithCancel(ctx)
		ccancel()
		if _, err := c.Call(cctx, "sdktest_no_such_tool", json.RawMessage(`{}`)); err == nil {
			t.Error("bridge plugin: a call whose context had ended succeeded")
		}
	})
}

// CheckModel runs a model plugin's Opener through the model contract
// in-process, as the host calls it, against the endpoint cfg names (one
// the test serves, answering any completion with some text). Each step is
// a subtest:
//
//   - open: the Opener builds a Model for cfg;
//   - complete: a completion answers, and the text handed to OnText is the
//     answer's text, in order;
//   - cancel: a completion whose context had ended fails, with a
//     cancellation and not a Response;
//   - unreachable: a completion of a Model opened on an address where
//     nothing listens fails with a *model.Error whose text does not show
//     cfg.APIKey.
func CheckModel(t *testing.T, open model.Opener, cfg model.Config) {
	t.Helper()
	h := ModelInProcess(t, open)
	ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
	defer cancel()
	c, err := h.Open(ctx, cfg, pluginhost.ModelOptions{})
	if err != nil {
		t.Fatalf("model plugin: Opener failed for %s: %v (code %q). Open must build a Model from the Config, without calling the endpoint", cfg.BaseURL, err, sdk.ErrorCode(err))
	}
	req := model.Request{Messages: []model.Message{{Role: "user", Text: "Say hello."}}, MaxTokens: 16}
	t.Run("complete", func(t *testing.T) {
		var streamed strings.Builder
		r := req
		r.OnText = func(d string) { streamed.WriteString(d) }
		res, err := c.Complete(ctx, r)
		if err != nil {
			t.Fatalf("model plugin: a completion failed: %v", err)
		}
		if streamed.Len() > 0 && streamed.String() != res.Text {
			t.Errorf("model plugin: OnText received %q but the answer's text is %q; hand every delta to Request.OnText, in order", trim(streamed.String()), trim(res.Text))
		}
	})
	t.Run("cancel", func(t *testing.T) {
		cctx, ccancel := context.WithCancel(ctx)
		ccancel()
		if res, err := c.Complete(cctx, req); err == nil {
			t.Errorf("model plugin: a completion whose context had ended answered %+v; end the call with the context", res)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		bad := cfg
		bad.BaseURL, bad.MaxRetries = "http://"+addr+"/v1", 0
		if bad.APIKey == "" {
			bad.APIKey = "sk-sdktest-secret-key"
		}
		bc, err := ModelInProcess(t, open).Open(ctx, bad, pluginhost.ModelOptions{})
		if err != nil {
			t.Fatalf("model plugin: Opener failed for %s: %v", bad.BaseURL, err)
		}
		_, err = bc.Complete(ctx, req)
		var me *model.Error
		switch {
		case err == nil:
			t.Fatal("model plugin: a completion where nothing listens answered")
		case !errors.As(err, &me):
			t.Errorf("model plugin: a completion where nothing listens failed with %v (%T); return a *model.Error (Kind unreachable)", err, err)
		}
		if strings.Contains(err.Error(), bad.APIKey) {
			t.Error("model plugin: the error of a failed completion shows the API key; take it out of every error")
		}
	})
}
