package credentials_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/credentials"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/sdk"
)

// A project server the person has not approved (pending or rejected) gets
// no auth plugin, whatever command asks: the plugin would contact its URL.
// A stand-in hermes-auth-oauth on the plugin path leaves a marker when it
// starts; the approved entry (the control) does start it.
func TestForRefusesUnapprovedProjectServer(t *testing.T) {
	plugins := t.TempDir()
	marker := filepath.Join(t.TempDir(), "started")
	if err := os.WriteFile(filepath.Join(plugins, "hermes-auth-oauth"), []byte("#!/bin/sh\ntouch '"+marker+"'\necho not-a-plugin\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HERMES_PLUGIN_PATH", plugins)
	home := t.TempDir()
	sup := supervisor.New(supervisor.Options{Home: home})
	t.Cleanup(sup.KillAll)
	m := credentials.New(credentials.Options{Home: home, Supervisor: sup})
	t.Cleanup(m.Close)
	entry := func(approval string) *config.Server {
		return &config.Server{Name: "docs", URL: "http://127.0.0.1:9/mcp", Transport: "http", Auth: "oauth", SSLVerify: true,
			Origin: config.Origin{File: "/repo/.hermes/mcp.yaml", Project: "/repo", Digest: strings.Repeat("b", 64), Approval: approval}}
	}
	for _, approval := range []string{config.ApprovalPending, config.ApprovalRejected} {
		_, err := m.For(context.Background(), entry(approval))
		if err == nil || sdk.ErrorCode(err) != sdk.CodeConfig || !strings.Contains(err.Error(), "hermes mcp approve docs") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: For = %v; want a one-line config error naming hermes mcp approve", approval, err)
		}
		if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: the auth plugin of an unapproved project server started (marker: %v)", approval, err)
		}
	}
	if _, err := m.For(context.Background(), entry(config.ApprovalApproved)); err == nil {
		t.Fatal("the stand-in plugin opened")
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the approved entry did not start the plugin either, so the test proves nothing: %v", err)
	}
}
