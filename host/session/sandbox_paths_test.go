//go:build linux

package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/sdk"
)

// A writable path swapped for a symbolic link between two starts (issue
// 22, item 2), through the real host session and the real stdio plugin:
// under sandbox: {writable: [W, W/data]} the probe replaces W/data, which
// it may write, with a link to $HERMES_HOME or to /. Its next start is
// refused with one line naming W/data and what it resolves to, and it
// never gets to read .env nor append to config.yaml. The same for a path
// inside its install folder.
func TestSandboxWritableSwappedForLinkRefused(t *testing.T) {
	for _, tc := range []struct{ name, to string }{
		{"W/data to HERMES_HOME", "hermes_home"},
		{"W/data to /", "root"},
		{"install/data to HERMES_HOME", "install"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newHostileWorld(t)
			base := filepath.Join(filepath.Dir(w.outside), "w")
			if tc.to == "install" {
				base = w.install
			}
			data := filepath.Join(base, "data")
			if err := os.MkdirAll(data, 0o700); err != nil {
				t.Fatal(err)
			}
			cfgYAML := filepath.Join(w.hermesHome, "config.yaml")
			if err := os.WriteFile(cfgYAML, []byte("mcp_servers: {}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			writable := []any{base, data}
			if tc.to == "install" {
				writable = []any{data}
			}
			srv := w.probeServer(t, map[string]any{"network": "none", "writable": writable})
			target := map[string]string{"hermes_home": w.hermesHome, "root": "/", "install": "../.."}[tc.to]
			resolved := map[string]string{"hermes_home": w.hermesHome, "root": "/", "install": w.hermesHome}[tc.to]

			s := connect(t, w.d, srv)
			if out := try(t, s, attempt{"write its data", "write_file", map[string]any{"path": filepath.Join(data, "x"), "content": "x"}}); !strings.HasPrefix(out, "ok: ") {
				t.Fatalf("writing its own W/data: %s", out)
			}
			if out := try(t, s, attempt{"swap", "replace_with_link", map[string]any{"path": data, "target": target}}); !strings.HasPrefix(out, "ok: ") {
				t.Fatalf("the server could not replace W/data with a link: %s", out)
			}
			if err := s.Close(); err != nil {
				t.Logf("close: %v", err)
			}

			// The next start of the same entry.
			rel := ""
			if tc.to == "root" {
				rel = w.hermesHome
			}
			s2, err := session.Connect(context.Background(), session.PlanFor(srv, w.d.Home, w.d.Environ), w.d)
			if err == nil {
				defer s2.Close()
				env := try(t, s2, attempt{"read .env", "read_file", map[string]any{"path": filepath.Join(data+rel, ".env")}})
				cfg := try(t, s2, attempt{"write config.yaml", "write_file", map[string]any{"path": filepath.Join(data+rel, "config.yaml"), "content": "evil: 1\n"}})
				t.Fatalf("the start after the swap was not refused: read .env: %s; write config.yaml: %s", env, cfg)
			}
			ce := connectErr(t, err)
			t.Logf("refused: %v", err)
			if ce.Code() != sdk.CodeSandbox || !strings.Contains(err.Error(), data+" resolves to "+resolved) || strings.Contains(err.Error(), "\n") {
				t.Errorf("want a one-line sandbox refusal naming %s and %s, got %v (code %s)", data, resolved, err, ce.Code())
			}
			wantFile(t, w.env, envText)
			wantFile(t, cfgYAML, "mcp_servers: {}\n")
		})
	}
}
