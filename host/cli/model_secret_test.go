package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testmodel"
)

// A model key not shaped like sk-..., refused by an endpoint that echoes
// it back, is shown nowhere: not in 'hermes model test', not in 'hermes
// chat', not in the sampling error a server receives, not in the logs.
func TestModelKeyEchoedByTheEndpointIsNeverShown(t *testing.T) {
	t.Parallel()
	const key = "zz-custom-KEY-123"
	srv := testmodel.New(t)
	srv.Key = "the-right-key"
	srv.EchoKey = true
	home := modelHome(t, srv.URL, key, "mcp_servers:\n"+tsEntry(t, "ts", ""))

	shown := map[string]string{}
	r := runHermes(t, home, "model", "test").must(t, 1)
	shown["hermes model test"] = r.stdout + r.stderr
	r = runHermes(t, home, "-v", "chat", "hi").must(t, 1)
	shown["hermes chat"] = r.stdout + r.stderr
	r = runHermes(t, home, "-v", "mcp", "call", "ts", "sample", "--arg", "prompt=hi")
	shown["the sampling error the server receives"] = r.stdout + r.stderr
	for name, text := range shown {
		if strings.Contains(text, key) {
			t.Errorf("%s shows the key:\n%s", name, text)
		}
		if !strings.Contains(text, "HTTP 401") {
			t.Errorf("%s does not show the refusal (so the test shows nothing):\n%s", name, text)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(home, "logs", "*"))
	saw401 := false
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), key) {
			t.Errorf("%s holds the key:\n%s", filepath.Base(f), b)
		}
		saw401 = saw401 || strings.Contains(string(b), "HTTP 401")
	}
	if !saw401 {
		t.Errorf("no log file records the refusal: %v", logs)
	}
	if n := len(srv.Requests()); n < 3 {
		t.Errorf("the endpoint received %d requests, want 3", n)
	}
}
