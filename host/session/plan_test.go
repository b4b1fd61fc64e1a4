package session_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/sdk"
)

// A stdio entry's plan: the built-in stdio plugin, what it learns about
// the server, the default connect timeout, no credentials; the revision
// spoken at a connect is what the next plan of the entry remembers.
func TestPlanOfStdioEntry(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	srv := testServer(dir)
	srv.Env = map[string]string{"TS_KEY": "v"}
	srv.ConnectTimeout, srv.Auth = 0, "fake"
	plan := session.PlanFor(srv, d.Home, []string{"PATH=/bin", "SECRET=x"})
	if plan.Refused != nil {
		t.Fatalf("refused: %v", plan.Refused)
	}
	if plan.Server != srv || plan.Launch.Plugin != config.TransportStdio || plan.Spec.Name != "stdio" || plan.Spec.Kind != sdk.KindTransport || plan.Spec.Label != "ts" {
		t.Fatalf("plan %+v, spec %+v", plan.Launch, plan.Spec)
	}
	if tc := plan.Transport; tc.Command != srv.Command || tc.StderrLog != filepath.Join(d.Home, "logs", "mcp-stderr.log") ||
		!slices.Equal(tc.Env, []string{"PATH=/bin", "TS_KEY=v"}) || tc.URL != "" || tc.Sandbox != nil {
		t.Fatalf("transport config %+v", tc)
	}
	if plan.ConnectTimeout != config.DefaultConnectTimeout || plan.Auth || plan.Remembered != "" || plan.Home != d.Home {
		t.Fatalf("timeout %s, auth %v, remembered %q, home %q", plan.ConnectTimeout, plan.Auth, plan.Remembered, plan.Home)
	}
	srv.ConnectTimeout = 30 * time.Second
	s := connect(t, d, srv)
	spoken := s.Protocol.Revision
	s.Close()
	if got := session.PlanFor(srv, d.Home, nil).Remembered; got != spoken || got == "" {
		t.Fatalf("the next plan remembers %q, the connect spoke %q", got, spoken)
	}
}

// A remote entry with an auth: method needs the host's credentials.
func TestPlanOfRemoteEntryWithAuth(t *testing.T) {
	t.Parallel()
	srv := &config.Server{Name: "r", Transport: "streamable-http", URL: "https://example.com/mcp", Auth: "oauth", SSLVerify: true,
		Headers: map[string]string{"X-Team": "t"}}
	plan := session.PlanFor(srv, t.TempDir(), nil)
	if plan.Refused != nil || !plan.Auth || plan.Spec.Name != "http" || plan.Transport.URL != srv.URL ||
		plan.Transport.Headers["X-Team"] != "t" || plan.Transport.InsecureSkipVerify || plan.Transport.Command != "" {
		t.Fatalf("plan %+v, transport %+v", plan, plan.Transport)
	}
}

// A refused plan says why with the code Connect always gave it, and
// Connect starts nothing for it (its Deps have no supervisor at all).
func TestRefusedPlanStartsNothing(t *testing.T) {
	t.Parallel()
	srv := &config.Server{Name: "p", Transport: "stdio", Command: "true", Enabled: true,
		Origin: config.Origin{File: "/repo/.mcp.json", Project: "/repo", Approval: config.ApprovalPending}}
	plan := session.PlanFor(srv, t.TempDir(), nil)
	var re *session.RefusedError
	var ce *session.ConnectError
	if !errors.As(plan.Refused, &re) || !errors.As(plan.Refused, &ce) || ce.Code() != sdk.CodeConfig || ce.Server != "p" {
		t.Fatalf("refused with %#v", plan.Refused)
	}
	if plan.Launch.Plugin != config.TransportStdio || plan.Spec.Name != "" || plan.Transport.Command != "" {
		t.Fatalf("a refused plan describes its entry and nothing more: %+v %+v", plan.Spec, plan.Transport)
	}
	if _, err := session.Connect(context.Background(), plan, session.Deps{}); err != plan.Refused {
		t.Fatalf("Connect: %v, want the plan's refusal", err)
	}
	if _, err := session.Connect(context.Background(), session.Plan{}, session.Deps{}); err == nil {
		t.Fatal("Connect took a plan PlanFor did not make")
	}
	broken := &config.Server{Name: "b", Err: errors.New("server \"b\": bad entry")}
	if p := session.PlanFor(broken, t.TempDir(), nil); p.Refused != broken.Err {
		t.Fatalf("a broken entry is refused with %v, want its own error", p.Refused)
	}
}
