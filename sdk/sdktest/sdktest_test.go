package sdktest_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/bridge"
	"github.com/hermes-agent/hermes/sdk/sdktest"
)

// fakeAuth is an Authenticator whose faults the test picks.
type fakeAuth struct {
	header      string // the header name Headers returns
	retryNoHdrs bool   // Challenge answers Retry without headers
	statusLeaks bool   // Status shows the token
	token       string
}

func (f *fakeAuth) Headers(context.Context, auth.HeadersRequest) (auth.Headers, error) {
	return auth.Headers{Headers: map[string]string{f.header: "Bearer " + f.token}}, nil
}

func (f *fakeAuth) Challenge(context.Context, auth.Challenge, auth.UI) (auth.Answer, error) {
	if f.retryNoHdrs {
		return auth.Answer{Retry: true}, nil
	}
	return auth.Answer{}, auth.LoginNeeded("s", "the token was refused")
}

func (f *fakeAuth) Login(context.Context, auth.LoginOptions, auth.UI) (auth.Status, error) {
	return auth.Status{}, nil
}
func (f *fakeAuth) Logout(context.Context) (auth.LogoutResult, error) {
	return auth.LogoutResult{}, nil
}
func (f *fakeAuth) Status(context.Context) (auth.Status, error) {
	st := auth.Status{Method: "fake", LoggedIn: true}
	if f.statusLeaks {
		st.Detail = "token " + f.token
	}
	return st, nil
}

func authOpener(f *fakeAuth) auth.Opener {
	return func(context.Context, auth.Config) (auth.Authenticator, error) { return f, nil }
}

type echoBridge struct{ strict bool }

func (e echoBridge) Call(_ context.Context, name string, args json.RawMessage) (bridge.Result, error) {
	if name != "echo" && e.strict {
		return bridge.Result{}, sdk.NewError(sdk.CodeConfig, "unknown tool %q", name)
	}
	return bridge.Result{Text: string(args)}, nil
}

var schema = json.RawMessage(`{"type":"object"}`)

// faults are the broken plugins a child test process checks, by name.
var faults = map[string]func(t *testing.T){
	"empty-header": func(t *testing.T) {
		sdktest.CheckAuth(t, authOpener(&fakeAuth{header: "", token: "abcdefghijk"}), auth.Config{Server: "s", Method: "fake"})
	},
	"retry-without-headers": func(t *testing.T) {
		sdktest.CheckAuth(t, authOpener(&fakeAuth{header: "Authorization", token: "abcdefghijk", retryNoHdrs: true}), auth.Config{Server: "s", Method: "fake"})
	},
	"status-leaks": func(t *testing.T) {
		sdktest.CheckAuth(t, authOpener(&fakeAuth{header: "Authorization", token: "abcdefghijk", statusLeaks: true}), auth.Config{Server: "s", Method: "fake"})
	},
	"duplicate-tool": func(t *testing.T) {
		desc := bridge.Description{Name: "b", Tools: []bridge.Tool{{Name: "echo", InputSchema: schema}, {Name: "echo", InputSchema: schema}}}
		sdktest.CheckBridge(t, desc, func(context.Context, bridge.Config) (bridge.Server, error) { return echoBridge{true}, nil }, bridge.Config{})
	},
	"unknown-tool-answers": func(t *testing.T) {
		desc := bridge.Description{Name: "b", Tools: []bridge.Tool{{Name: "echo", InputSchema: schema}}}
		sdktest.CheckBridge(t, desc, func(context.Context, bridge.Config) (bridge.Server, error) { return echoBridge{false}, nil }, bridge.Config{})
	},
}

// TestFault is what a child process runs: the check of one broken plugin.
func TestFault(t *testing.T) {
	f := faults[os.Getenv("SDKTEST_FAULT")]
	if f == nil {
		t.Skip("run by TestChecksSayWhatIsWrong in a child process")
	}
	f(t)
}

// A plugin that keeps the contract passes the checks of its kind.
func TestChecksPassAGoodPlugin(t *testing.T) {
	sdktest.CheckAuth(t, authOpener(&fakeAuth{header: "Authorization", token: "abcdefghijk"}), auth.Config{Server: "s", Method: "fake"})
	desc := bridge.Description{Name: "b", Tools: []bridge.Tool{{Name: "echo", InputSchema: schema}}}
	sdktest.CheckBridge(t, desc, func(context.Context, bridge.Config) (bridge.Server, error) { return echoBridge{true}, nil }, bridge.Config{})
}

// Each check fails a broken plugin with a line that says, in a plugin
// author's terms, what is wrong and what to do.
func TestChecksSayWhatIsWrong(t *testing.T) {
	want := map[string]string{
		"empty-header":          "auth plugin: Headers returned an empty header name",
		"retry-without-headers": "auth plugin: Challenge answered Retry without Headers; return the new headers with the answer",
		"status-leaks":          "auth plugin: Status.Detail holds the token Headers gave; Status must never show a token",
		"duplicate-tool":        `bridge plugin: tool "echo" is described twice`,
		"unknown-tool-answers":  "bridge plugin: a call of a tool it does not describe returned",
	}
	for name, line := range want {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestFault$", "-test.v")
			cmd.Env = append(os.Environ(), "SDKTEST_FAULT="+name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the check passed a broken plugin:\n%s", out)
			}
			if !strings.Contains(string(out), line) {
				t.Fatalf("the check's output does not say %q:\n%s", line, out)
			}
		})
	}
}
