package login_test

import (
	"context"
	"errors"
	"testing"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"
	"github.com/hermes-agent/hermes/host/cli/mcp/login"
)

// TestLoginFlagsBindToOptions: every flag and argument of login, reauth,
// logout and auth-status lands in its Options, and nothing runs (the runF
// seam takes the place of the run).
func TestLoginFlagsBindToOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := &cmdkit.Env{}

	var lo *login.LoginOptions
	cmd := login.NewCmdLogin(e, func(_ context.Context, o *login.LoginOptions) error { lo = o; return nil })
	if err := cmd.Run(ctx, []string{"login", "--no-browser", "--device", "--scope", "repo read", "gh"}); err != nil {
		t.Fatalf("login: %v", err)
	}
	want := login.LoginOptions{Env: e, LoginFlags: login.LoginFlags{NoBrowser: true, Device: true, Scope: "repo read"}, Name: "gh"}
	if lo == nil || *lo != want {
		t.Errorf("login options = %+v, want %+v", lo, want)
	}

	var ro *login.ReauthOptions
	cmd = login.NewCmdReauth(e, func(_ context.Context, o *login.ReauthOptions) error { ro = o; return nil })
	if err := cmd.Run(ctx, []string{"reauth", "--all", "--device", "--no-browser"}); err != nil {
		t.Fatalf("reauth --all: %v", err)
	}
	wantR := login.ReauthOptions{Env: e, LoginFlags: login.LoginFlags{NoBrowser: true, Device: true}, All: true}
	if ro == nil || *ro != wantR {
		t.Errorf("reauth options = %+v, want %+v", ro, wantR)
	}
	ro = nil
	cmd = login.NewCmdReauth(e, func(_ context.Context, o *login.ReauthOptions) error { ro = o; return nil })
	if err := cmd.Run(ctx, []string{"reauth", "gh"}); err != nil {
		t.Fatalf("reauth gh: %v", err)
	}
	if ro == nil || ro.All || ro.Name != "gh" {
		t.Errorf("reauth gh options = %+v, want Name gh, not All", ro)
	}
	// A usage error is decided before anything runs.
	ran := false
	cmd = login.NewCmdReauth(e, func(context.Context, *login.ReauthOptions) error { ran = true; return nil })
	var ee *cmdkit.ExitError
	if err := cmd.Run(ctx, []string{"reauth", "--all", "gh"}); !errors.As(err, &ee) || ee.Code != cmdkit.ExitUsage || ran {
		t.Errorf("reauth --all gh = %v (ran %v), want a usage error and no run", err, ran)
	}

	var oo *login.LogoutOptions
	cmd = login.NewCmdLogout(e, func(_ context.Context, o *login.LogoutOptions) error { oo = o; return nil })
	if err := cmd.Run(ctx, []string{"logout", "gh"}); err != nil {
		t.Fatalf("logout: %v", err)
	}
	if oo == nil || oo.Name != "gh" || oo.Env != e {
		t.Errorf("logout options = %+v, want Name gh", oo)
	}

	var so *login.AuthStatusOptions
	cmd = login.NewCmdAuthStatus(e, func(_ context.Context, o *login.AuthStatusOptions) error { so = o; return nil })
	if err := cmd.Run(ctx, []string{"auth-status", "--json"}); err != nil {
		t.Fatalf("auth-status: %v", err)
	}
	if so == nil || !so.JSON.On {
		t.Errorf("auth-status --json: options %+v, want JSON on", so)
	}
}
