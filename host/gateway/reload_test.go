package gateway_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hermes-agent/hermes/host/app"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/gateway"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// collector is a loopback OTLP/HTTP endpoint that counts the exports it
// receives.
type collector struct {
	url            string
	traces, metric atomic.Int64
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	mux := http.NewServeMux()
	answer := func(n *atomic.Int64) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			n.Add(1)
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.WriteHeader(http.StatusOK)
		}
	}
	mux.HandleFunc("POST /v1/traces", answer(&c.traces))
	mux.HandleFunc("POST /v1/metrics", answer(&c.metric))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

// auditSubjects are the subjects of the audit lines in path, in order.
func auditSubjects(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(b)) {
		var a struct{ Subject, Tool string }
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("%s: line %q: %v", path, line, err)
		}
		out = append(out, a.Subject+" "+a.Tool)
	}
	return out
}

// TestReloadTakesUpAuditAndTelemetry: a reload with another audit: and
// telemetry: block writes the next audit lines to the new file (none lost,
// none in both), turns on /metrics and the OTLP export, and keeps the
// sessions; a block whose audit file cannot be opened or whose telemetry
// cannot be built is refused with one line and changes nothing.
func TestReloadTakesUpAuditAndTelemetry(t *testing.T) {
	t.Parallel()
	testbin.Path(t, "hermes-transport-stdio")
	home := t.TempDir()
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.jsonl"), filepath.Join(dir, "second", "audit.jsonl")
	otlp := newCollector(t)
	sum := sha256.Sum256([]byte("dana-token-0123456789"))
	servers := "mcp_servers:\n  ts:\n    command: " + testbin.Path(t, "hermes-testserver") + "\n" +
		"gateway:\n  resource: http://127.0.0.1/mcp\n  tokens:\n    - {subject: dana, sha256: \"" + hex.EncodeToString(sum[:]) + "\"}\n" +
		"  policy:\n    - {allow: {subjects: [dana], tools: [\"*\"]}}\n"
	f := app.New(app.Options{Env: []string{"HERMES_HOME=" + home, "HOME=" + t.TempDir(), "HERMES_PLUGIN_PATH=" + testbin.Dir(t),
		"PATH=" + os.Getenv("PATH")}, Dir: t.TempDir(), Stderr: io.Discard})
	// The session key from the home's .env, as a deployment may give it.
	if err := os.WriteFile(filepath.Join(home, ".env"), []byte("HERMES_GATEWAY_SESSION_KEY="+strings.Repeat("r", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(false) })
	setup := func(text string) gateway.Setup {
		t.Helper()
		path := filepath.Join(home, "config.yaml")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.LoadFileEnv(path, home, f.ConfigEnv())
		if err != nil {
			t.Fatal(err)
		}
		gw, err := config.LoadGatewayFile(path, home, f.ConfigEnv())
		if err != nil {
			t.Fatal(err)
		}
		return gateway.Setup{F: f, Servers: cfg.Servers, Block: gw, Stdout: io.Discard, Version: "test"}
	}

	b, err := gateway.Build(context.Background(), setup(servers+"  audit: {file: "+first+"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			b.Close()
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go func() { _ = b.Serve(ctx, ln, 0) }()
	base := "http://" + ln.Addr().String()
	metrics := func() (int, string) {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	c := connect(t, base, "dana-token-0123456789", "2025-11-25")
	call := func(msg string) {
		t.Helper()
		res, err := c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_echo", Arguments: map[string]any{"message": msg}}})
		if err != nil || res.IsError {
			t.Fatalf("echo %s: %v %+v", msg, err, res)
		}
	}
	call("before")
	if code, _ := metrics(); code != http.StatusNotFound {
		t.Fatalf("/metrics without prometheus: %d", code)
	}

	if err := b.Reload(context.Background(), setup(servers+"  audit: {file: "+second+"}\n"+
		"  telemetry: {otlp_endpoint: \""+otlp.url+"\", prometheus: true}\n")); err != nil {
		t.Fatalf("reload: %v", err)
	}
	call("after") // the session opened before the reload goes on
	if got := auditSubjects(t, first); len(got) != 1 || got[0] != "dana mcp_ts_echo" {
		t.Errorf("the first audit file holds %q; want the call before the reload only", got)
	}
	if got := auditSubjects(t, second); len(got) != 1 || got[0] != "dana mcp_ts_echo" {
		t.Errorf("the second audit file holds %q; want the call after the reload only", got)
	}
	if code, body := metrics(); code != http.StatusOK || !strings.Contains(body, `gen_ai_tool_name="mcp_ts_echo"`) {
		t.Errorf("/metrics after the reload: %d\n%s", code, body)
	}

	// A file that cannot be opened (its folder is a file), and a telemetry
	// endpoint that is no URL it can export to: refused, one line each,
	// and the gateway goes on as it was.
	bad := setup(servers + "  audit: {file: " + filepath.Join(first, "audit.jsonl") + "}\n")
	err = b.Reload(context.Background(), bad)
	if err == nil || !strings.HasPrefix(err.Error(), "gateway.audit: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a reload with an audit file that cannot be opened: %v", err)
	}
	bad = setup(servers + "  audit: {file: " + second + "}\n")
	bad.Block.Telemetry.OTLPEndpoint = "ftp://collector.invalid"
	err = b.Reload(context.Background(), bad)
	if err == nil || !strings.HasPrefix(err.Error(), "gateway.telemetry: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a reload with a telemetry endpoint that is not http: %v", err)
	}
	call("refused")
	if got := auditSubjects(t, second); len(got) != 2 {
		t.Errorf("after the refused reloads the second audit file holds %q; want both calls since the good reload", got)
	}
	if code, _ := metrics(); code != http.StatusOK {
		t.Errorf("/metrics after the refused reloads: %d", code)
	}

	// Closing flushes the exporters the reload started.
	stop()
	b.Close()
	closed = true
	testwait.For(t, 0, "spans and metrics at the collector the reload named", func() bool {
		return otlp.traces.Load() > 0 && otlp.metric.Load() > 0
	})
}
