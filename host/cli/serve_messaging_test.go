package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// serveClient is mcp-go's stdio client on `hermes mcp serve` with env,
// and the serve process.
type serveClient struct {
	*client.Client
	cmd    *exec.Cmd
	stderr *serveStderrLog
}

func startServeStdio(t *testing.T, env []string) *serveClient {
	t.Helper()
	sc := &serveClient{stderr: &serveStderrLog{}}
	c, err := client.NewStdioMCPClientWithOptions(testbin.Path(t, "hermes"), env, []string{"mcp", "serve"},
		transport.WithCommandStderrWriter(sc.stderr),
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = env
			sc.cmd = cmd
			return cmd, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	sc.Client = c
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatalf("initialize: %v\nstderr:\n%s", err, sc.stderr.String())
	}
	return sc
}

// call calls a tool and returns its result, failing the test on a
// protocol error.
func (sc *serveClient) call(t *testing.T, ctx context.Context, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := sc.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s", name, err, sc.stderr.String())
	}
	return res
}

// text is the result's text content.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result has %d contents: %+v", len(res.Content), res)
	}
	tc, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		t.Fatalf("result content is %T", res.Content[0])
	}
	return tc.Text
}

// bridgePid is the pid of serve's bridge plugin (the child of the serve
// process named hermes-bridge-messaging), 0 when there is none.
func bridgePid(t *testing.T, parent int) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 || fields[1] != strconv.Itoa(parent) || fields[0] == "Z" {
			continue
		}
		if strings.HasPrefix(s[open+1:end], "hermes-bridge") {
			return pid
		}
	}
	return 0
}

// TestServeMessagingMCPGo: mcp-go's client on `hermes mcp serve` over the
// fixture: a new message written by another process wakes events_wait;
// the plugin killed during an events_wait fails that call clearly and
// the next call is served by a new plugin.
func TestServeMessagingMCPGo(t *testing.T) {
	t.Parallel()
	fx := newServeFixture(t)
	sc := startServeStdio(t, fx.env(t))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	res := sc.call(t, ctx, "conversations_list", nil)
	var list struct {
		Count         int
		Conversations []map[string]any
	}
	if err := json.Unmarshal([]byte(text(t, res)), &list); err != nil || list.Count == 0 || res.IsError {
		t.Fatalf("conversations_list = %q (%v)", text(t, res), err)
	}
	sc2, _ := json.Marshal(res.StructuredContent)
	var a, b any
	_ = json.Unmarshal(sc2, &a)
	_ = json.Unmarshal([]byte(text(t, res)), &b)
	if !jsonEqual(a, b) {
		t.Fatalf("structuredContent %s differs from the text %s", sc2, text(t, res))
	}

	// A message appended by another process wakes a pending events_wait.
	got := make(chan *mcp.CallToolResult, 1)
	go func() {
		var req mcp.CallToolRequest
		req.Params.Name = "events_wait"
		req.Params.Arguments = map[string]any{"after_cursor": 0, "session_key": serveTGKey, "timeout_ms": 60000}
		r, err := sc.CallTool(ctx, req)
		if err != nil {
			t.Errorf("events_wait: %v", err)
		}
		got <- r
	}()
	fx.appendMessages(t, serveTGSession, 1)
	r := <-got
	if r == nil || r.IsError || !strings.Contains(text(t, r), `"type": "message"`) || !strings.Contains(text(t, r), serveTGKey) {
		t.Fatalf("events_wait after an append = %+v", r)
	}

	// The plugin killed during an events_wait: that call fails saying
	// so; the next call works in a new plugin process.
	parent := sc.cmd.Process.Pid
	first := bridgePid(t, parent)
	if first == 0 {
		t.Fatal("no bridge plugin process under hermes mcp serve")
	}
	go func() {
		var req mcp.CallToolRequest
		req.Params.Name = "events_wait"
		req.Params.Arguments = map[string]any{"session_key": "agent:main:none:dm:0", "timeout_ms": 5000}
		r, err := sc.CallTool(ctx, req)
		if err != nil {
			t.Errorf("events_wait during the kill: %v", err)
		}
		got <- r
	}()
	// The wait is in the plugin once its process has a call running; the
	// kill may also land before it: either way the call must end at once.
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r = <-got
	if r == nil {
		t.Fatal("no result for the killed call")
	}
	if r.IsError {
		if msg := text(t, r); !strings.Contains(msg, "hermes-bridge-messaging stopped during the call") {
			t.Fatalf("killed call: %q", msg)
		}
	} else if !strings.Contains(text(t, r), `"reason": "timeout"`) {
		// The kill landed before the call reached the plugin: the call
		// went to the new process and waited its 5 s out (the crash of a
		// call in flight is proven with the fake bridge in host/serve).
		t.Fatalf("killed call returned %q", text(t, r))
	}
	testwait.For(t, 20*time.Second, "the killed plugin to be reaped", func() bool { return syscall.Kill(first, 0) == syscall.ESRCH })
	res = sc.call(t, ctx, "channels_list", nil)
	if res.IsError || !strings.Contains(text(t, res), `"count"`) {
		t.Fatalf("channels_list after the restart = %q", text(t, res))
	}
	if second := bridgePid(t, parent); second == 0 || second == first {
		t.Fatalf("bridge plugin after the kill: pid %d (killed %d)", second, first)
	}
}

// TestServeMessagingBadHomes: a missing HERMES_HOME answers without data;
// a corrupt state.db answers tool errors and the server lives on.
func TestServeMessagingBadHomes(t *testing.T) {
	t.Parallel()
	testbin.Path(t, "hermes-bridge-messaging")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	missing := filepath.Join(t.TempDir(), "no-such-home")
	sc := startServeStdio(t, hermesTestEnv(t, missing))
	res := sc.call(t, ctx, "conversations_list", nil)
	if res.IsError || !strings.Contains(text(t, res), `"count": 0`) {
		t.Fatalf("conversations_list without a home = %q", text(t, res))
	}

	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "state.db"), []byte(strings.Repeat("not a database\n", 4096)), 0o600); err != nil {
		t.Fatal(err)
	}
	sc = startServeStdio(t, hermesTestEnv(t, home))
	res = sc.call(t, ctx, "messages_read", map[string]any{"session_key": serveTGKey})
	// As the original: an unreadable state.db is no index at all (the
	// fallback, sessions.json, is absent too), so the conversation is
	// not found; the plugin logs why.
	if msg := text(t, res); !res.IsError || msg != `{"error": "Conversation not found: `+serveTGKey+`"}` {
		t.Fatalf("messages_read on a corrupt state.db = %v %q", res.IsError, msg)
	}
	// The server is still there.
	if err := sc.Ping(ctx); err != nil {
		t.Fatalf("ping after the corrupt read: %v", err)
	}
	if strings.Contains(sc.stderr.String(), "panic") {
		t.Fatalf("a panic:\n%s", sc.stderr.String())
	}
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
