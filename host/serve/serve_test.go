package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/serve"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// startFake starts the fake bridge plugin (internal/testplugins/fakebridge)
// through a real supervisor.
func startFake(t *testing.T, home string, settings map[string]any, dotenv map[string]string) *serve.Bridge {
	t.Helper()
	return startFakeTB(t, home, settings, dotenv)
}

// startFakeB is startFake for a benchmark.
func startFakeB(b *testing.B, home string) *serve.Bridge {
	b.Helper()
	return startFakeTB(b, home, nil, nil)
}

func startFakeTB(t testing.TB, home string, settings map[string]any, dotenv map[string]string) *serve.Bridge {
	t.Helper()
	t.Setenv("HERMES_PLUGIN_PATH", testbin.Dir(t))
	testbin.Path(t, "hermes-bridge-fake")
	sup := supervisor.New(supervisor.Options{Home: home})
	t.Cleanup(sup.KillAll)
	b, err := serve.StartBridge(context.Background(), serve.BridgeOptions{
		Supervisor: sup, Name: "fake", Home: home, Settings: settings,
		Env: serve.DotEnvLookup(dotenv), MaxResultBytes: 4096,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func pidOf(t *testing.T, b *serve.Bridge) int {
	t.Helper()
	res, err := b.Call(context.Background(), "pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Pid int }
	if err := json.Unmarshal(res.Structured, &v); err != nil || v.Pid == 0 {
		t.Fatalf("pid result %q: %v", res.Text, err)
	}
	return v.Pid
}

// TestPluginKilledMidCall: a call in flight when the plugin dies fails at
// once with a clear error; the plugin is started again and the next call
// works, in a new process.
func TestPluginKilledMidCall(t *testing.T) {
	home := t.TempDir()
	b := startFake(t, home, nil, nil)
	first := pidOf(t, b)
	errc := make(chan error, 1)
	go func() {
		_, err := b.Call(context.Background(), "block", json.RawMessage(`{}`))
		errc <- err
	}()
	started := filepath.Join(home, "block.started")
	testwait.For(t, 10*time.Second, "the block call to start", func() bool { _, err := os.Stat(started); return err == nil })
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	var crash *serve.CrashError
	if !errors.As(err, &crash) || !strings.Contains(err.Error(), "hermes-bridge-fake stopped during the call") || !strings.Contains(err.Error(), "call the tool again") {
		t.Fatalf("call in flight: %v", err)
	}
	// A call made once the process is gone is sent to a new one.
	testwait.For(t, 20*time.Second, "the killed plugin to be reaped", func() bool { return syscall.Kill(first, 0) == syscall.ESRCH })
	second := pidOf(t, b)
	if second == first {
		t.Fatalf("the next call ran in the killed process %d", first)
	}
}

// TestBridgeEnvAndLimits: the plugin gets only the variables it named,
// and a result over the limit is refused naming the key.
func TestBridgeEnvAndLimits(t *testing.T) {
	home := t.TempDir()
	t.Setenv("OTHER_SECRET", "not-for-the-plugin")
	b := startFake(t, home, map[string]any{"big_bytes": 10000.0, "k": "v"}, map[string]string{"FAKE_BRIDGE_TOKEN": "tok-123", "OTHER": "x"})
	res, err := b.Call(context.Background(), "env", nil)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Env      map[string]string
		Settings map[string]any
		Home     string
	}
	if err := json.Unmarshal(res.Structured, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Env) != 1 || v.Env["FAKE_BRIDGE_TOKEN"] != "tok-123" || v.Settings["k"] != "v" || v.Home != home {
		t.Fatalf("the plugin was opened with %+v", v)
	}
	if _, err := b.Call(context.Background(), "big", nil); err == nil || !strings.Contains(err.Error(), "mcp_serve.max_result_mb") {
		t.Fatalf("big result: %v", err)
	}
}

// serveHTTP serves the fake bridge over loopback HTTP and returns the URL.
func serveHTTP(t *testing.T, token string) string {
	t.Helper()
	home := t.TempDir()
	b := startFake(t, home, nil, nil)
	s := serve.NewServer(b.Description(), b, serve.ServerOptions{Version: "test", CallTimeout: time.Minute})
	o := serve.HTTPOptions{Addr: "127.0.0.1:0", Token: token, MaxRequestBytes: 64 << 10}
	ln, err := serve.Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve.ServeHTTP(ctx, s, ln, o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return serve.URL(ln)
}

const token = "test-token-0123456789abcdef"

func TestHTTPWithMCPClient(t *testing.T) {
	url := serveHTTP(t, token)
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init, err := c.Initialize(ctx, mcp.InitializeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if init.ServerInfo.Name != "fake" || init.Instructions != "A fake bridge for tests." {
		t.Fatalf("initialize: %+v", init)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		raw, _ := json.Marshal(tl)
		if !strings.Contains(string(raw), `"outputSchema":{`) {
			t.Errorf("tool %s has no output schema: %s", tl.Name, raw)
		}
	}
	if strings.Join(names, ",") != "big,block,echo,env,fail,pid" { // mcp-go lists tools by name
		t.Fatalf("tools = %v", names)
	}
	var req mcp.CallToolRequest
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"a": "b"}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if res.IsError || string(sc) != `{"a":"b"}` || res.Content[0].(mcp.TextContent).Text != `{"a":"b"}` {
		t.Fatalf("echo = %+v (structured %s)", res, sc)
	}
	req.Params.Name = "fail"
	if res, err := c.CallTool(ctx, req); err != nil || !res.IsError {
		t.Fatalf("fail = %+v, %v", res, err)
	}
}

// TestHTTPRefusals: no or a wrong token, a foreign Origin or Host, a body
// over the limit, and a non-loopback address are refused.
func TestHTTPRefusals(t *testing.T) {
	url := serveHTTP(t, token)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	post := func(hdr map[string]string, host, payload string) *http.Response {
		t.Helper()
		req, err := http.NewRequest("POST", url, strings.NewReader(payload))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	good := "Bearer " + token
	for name, tc := range map[string]struct {
		hdr     map[string]string
		host    string
		payload string
		want    int
	}{
		"no token":       {hdr: nil, want: 401},
		"wrong token":    {hdr: map[string]string{"Authorization": "Bearer wrong-token-0123456789"}, want: 401},
		"token prefix":   {hdr: map[string]string{"Authorization": good[:len(good)-1]}, want: 401},
		"foreign Origin": {hdr: map[string]string{"Authorization": good, "Origin": "http://evil.example"}, want: 403},
		"foreign Host":   {hdr: map[string]string{"Authorization": good}, host: "evil.example:80", want: 403},
		"too large":      {hdr: map[string]string{"Authorization": good}, payload: strings.Repeat(" ", 70<<10) + body, want: 413},
	} {
		payload := tc.payload
		if payload == "" {
			payload = body
		}
		if resp := post(tc.hdr, tc.host, payload); resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", name, resp.StatusCode, tc.want)
		}
	}
	if resp := post(map[string]string{"Authorization": good, "Origin": "http://localhost:3000"}, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); resp.StatusCode != 200 {
		t.Errorf("a loopback Origin with the token: status %d", resp.StatusCode)
	}
	var nl *serve.NonLoopbackError
	if _, err := serve.Listen(serve.HTTPOptions{Addr: "0.0.0.0:0"}); !errors.As(err, &nl) || !strings.Contains(err.Error(), "--allow-remote") {
		t.Errorf("0.0.0.0 without --allow-remote: %v", err)
	}
}

func TestEnsureToken(t *testing.T) {
	home := t.TempDir()
	t.Setenv(serve.TokenVar, "")
	tok, created, err := serve.EnsureToken(home)
	if err != nil || !created || len(tok) < serve.MinTokenLength {
		t.Fatalf("first: %q %v %v", tok, created, err)
	}
	fi, err := os.Stat(filepath.Join(home, config.DotEnvFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf(".env: %v %v", fi, err)
	}
	again, created, err := serve.EnsureToken(home)
	if err != nil || created || again != tok {
		t.Fatalf("second: %v %v (same token: %v)", created, err, again == tok)
	}
	t.Setenv(serve.TokenVar, "short")
	if _, _, err := serve.EnsureToken(home); err == nil || !strings.Contains(err.Error(), "shorter than "+strconv.Itoa(serve.MinTokenLength)) {
		t.Fatalf("short token: %v", err)
	}
}

// TestHTTPSessionLifecycle: a session a client ended with DELETE, or one
// the server never gave out, is answered 404; a live one is served.
func TestHTTPSessionLifecycle(t *testing.T) {
	url := serveHTTP(t, token)
	do := func(method, session, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := do("POST", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, id)
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if resp := do("POST", id, ping); resp.StatusCode != 200 {
		t.Fatalf("ping on the live session: %d", resp.StatusCode)
	}
	if resp := do("DELETE", id, ""); resp.StatusCode != 200 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	if resp := do("POST", id, ping); resp.StatusCode != 404 {
		t.Errorf("ping on the ended session: %d, want 404", resp.StatusCode)
	}
	if resp := do("POST", "hermes-00000000000000000000000000000000", ping); resp.StatusCode != 404 {
		t.Errorf("ping on an unknown session: %d, want 404", resp.StatusCode)
	}
}

// TestCallTimeout: a plugin that never answers a call is cut off at
// mcp_serve.call_timeout with an error naming the key, and serves the
// next call.
func TestCallTimeout(t *testing.T) {
	home := t.TempDir()
	b := startFake(t, home, nil, nil)
	s := serve.NewServer(b.Description(), b, serve.ServerOptions{Version: "test", CallTimeout: 300 * time.Millisecond})
	o := serve.HTTPOptions{Addr: "127.0.0.1:0", Token: token}
	ln, err := serve.Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve.ServeHTTP(ctx, s, ln, o) }()
	defer func() { cancel(); <-done }()
	c, err := client.NewStreamableHttpClient(serve.URL(ln), transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
	defer ccancel()
	if err := c.Start(cctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(cctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	var req mcp.CallToolRequest
	req.Params.Name = "block"
	res, err := c.CallTool(cctx, req)
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(mcp.TextContent).Text, "mcp_serve.call_timeout") {
		t.Fatalf("a call the plugin never answers: %+v, %v", res, err)
	}
	req.Params.Name = "pid"
	if res, err := c.CallTool(cctx, req); err != nil || res.IsError {
		t.Fatalf("the next call: %+v, %v", res, err)
	}
}

// TestBridgeReplyBoundedWhileRead: a bridge plugin that answers with 256 MB
// against a bound of 4 KB is refused while its reply is read, before the
// host holds it (the host allocates far less than the reply), with an error
// naming mcp_serve.max_result_mb; the next call runs in a new plugin.
func TestBridgeReplyBoundedWhileRead(t *testing.T) {
	home := t.TempDir()
	b := startFake(t, home, map[string]any{"big_bytes": float64(256 << 20)}, nil)
	first := pidOf(t, b)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := b.Call(context.Background(), "big", nil)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "mcp_serve.max_result_mb") {
		t.Fatalf("a 256 MB reply: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("the host allocated %d MB reading a 256 MB reply it refuses; it must stop at the bound", alloc>>20)
	}
	if second := pidOf(t, b); second == first {
		t.Errorf("the next call ran in the plugin whose reply was cut (%d)", first)
	}
}
