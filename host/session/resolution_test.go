package session_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
)

// An entry that spells streamable HTTP under transport: as other clients
// spell it under type: ("streamablehttp") connects to a real HTTP server
// through the http plugin, as type: streamablehttp does; it used to look
// for a plugin hermes-transport-streamablehttp.
func TestTransportSpellingConnectsOverHTTP(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	p := startTestServer(t, dir, "--http", "127.0.0.1:0")
	for _, key := range []string{"transport", "type"} {
		t.Run(key, func(t *testing.T) {
			home := t.TempDir()
			src := "mcp_servers:\n  ts:\n    " + key + ": streamablehttp\n    url: " + p.URL + "/mcp\n    connect_timeout: 60\n"
			if err := os.WriteFile(filepath.Join(home, config.File), []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(home)
			if err != nil {
				t.Fatal(err)
			}
			srv := cfg.Server("ts")
			if srv == nil || srv.Err != nil {
				t.Fatalf("entry: %+v", srv)
			}
			s := mustConnect(t, srv, d)
			if got := callText(t, s, "echo", map[string]any{"message": "over http"}); got != "over http" {
				t.Fatalf("echo = %q", got)
			}
		})
	}
}
