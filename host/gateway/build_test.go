package gateway_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hermes-agent/hermes/host/app"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/gateway"
	"github.com/hermes-agent/hermes/internal/testbin"
)

// A gateway built from a config file's gateway: block: the static token's
// person calls the Go test server, and /metrics shows the call on the
// OpenTelemetry MCP conventions, a tool error marked as one; a missing
// session key is one line naming the variable.
func TestBuildFromConfig(t *testing.T) {
	t.Parallel()
	testbin.Path(t, "hermes-transport-stdio")
	home := t.TempDir()
	sum := sha256.Sum256([]byte("carol-token-0123456789"))
	cfgText := "mcp_servers:\n  ts:\n    command: " + testbin.Path(t, "hermes-testserver") + "\n" +
		"gateway:\n  resource: http://127.0.0.1/mcp\n  tokens:\n    - {subject: carol, sha256: \"" + hex.EncodeToString(sum[:]) + "\"}\n" +
		"  policy:\n    - {allow: {subjects: [carol], tools: [\"*\"]}}\n  telemetry: {prometheus: true}\n  audit: {stdout: true}\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HERMES_HOME=" + home, "HOME=" + t.TempDir(), "HERMES_PLUGIN_PATH=" + testbin.Dir(t), "PATH=" + os.Getenv("PATH")}
	build := func(extra ...string) (*gateway.Built, error) {
		f := app.New(app.Options{Env: append(append([]string{}, env...), extra...), Dir: t.TempDir(), Stderr: io.Discard})
		t.Cleanup(func() { f.Close(false) })
		cfg, err := f.Config()
		if err != nil {
			t.Fatal(err)
		}
		gw, err := config.LoadGateway(home, f.ConfigEnv())
		if err != nil {
			t.Fatal(err)
		}
		return gateway.Build(context.Background(), gateway.Setup{F: f, Servers: cfg.Servers, Block: gw, Stdout: io.Discard, Version: "test"})
	}
	if _, err := build(); err == nil || !strings.Contains(err.Error(), "$HERMES_GATEWAY_SESSION_KEY is not set") {
		t.Fatalf("without a session key: %v", err)
	}
	b, err := build("HERMES_GATEWAY_SESSION_KEY=" + strings.Repeat("s", 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go func() { _ = b.Serve(ctx, ln, 0) }()
	base := "http://" + ln.Addr().String()
	c := connect(t, base, "carol-token-0123456789", "2026-07-28")
	res, err := c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_error_result"}})
	if err != nil || !res.IsError {
		t.Fatalf("error_result: %v %+v", err, res)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`mcp_server_operation_duration_seconds_count{`, `gen_ai_tool_name="mcp_ts_error_result"`, `error_type="tool_error"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
