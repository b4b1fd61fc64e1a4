package registry_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
)

// A result over the server's max_message_mb fails the call at once with an
// error that names the server and the key to raise, instead of hanging
// until the call's timeout; the server reconnects and keeps serving.
func TestMessageLimitFailsTheCall(t *testing.T) {
	deps, dir, _ := liveEnv(t)
	srv := tsServer(dir, "big")
	srv.MaxMessageBytes = 1 << 20
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
	ce := callErr(t, m, "mcp_big_huge", map[string]any{"bytes": 2 << 20})
	for _, want := range []string{"big", "max_message_mb", "1 MB"} {
		if !strings.Contains(ce.Msg, want) {
			t.Errorf("error %q lacks %q", ce.Msg, want)
		}
	}
	// The connection ended; the server reconnects and serves again.
	eventually(t, 10*time.Second, "a call served after the reconnect", func() bool {
		out, err := m.Call(context.Background(), "mcp_big_echo", map[string]any{"message": "still here"})
		return err == nil && strings.Contains(out, "still here")
	})
}
