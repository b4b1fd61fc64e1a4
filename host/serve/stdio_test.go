package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/serve"
	"github.com/hermes-agent/hermes/internal/benchfloor"
	"github.com/hermes-agent/hermes/sdk/bridge"
)

// echoCaller answers every call with its arguments as text.
type echoCaller struct{}

func (echoCaller) Call(_ context.Context, name string, args json.RawMessage) (bridge.Result, error) {
	return bridge.Result{Text: name + ":" + string(args)}, nil
}

func echoServerDesc() bridge.Description {
	return bridge.Description{Name: "echo", Tools: []bridge.Tool{{Name: "echo", Description: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
}

// stdioChildEnv makes the test binary a `hermes mcp serve` stdio server
// (the serve package on its own stdin/stdout, limit in bytes), so a test
// can measure the memory of a process that does nothing else.
const stdioChildEnv = "HERMES_TEST_SERVE_STDIO_LIMIT"

func TestMain(m *testing.M) {
	if v := os.Getenv(stdioChildEnv); v != "" {
		limit, _ := strconv.ParseInt(v, 10, 64)
		s := serve.NewServer(echoServerDesc(), echoCaller{}, serve.ServerOptions{Version: "test"})
		if err := serve.ServeStdio(context.Background(), s, os.Stdin, os.Stdout, serve.StdioOptions{MaxRequestBytes: limit}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(benchfloor.Main(m))
}

// vmHWM is the peak resident memory of pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// TestStdioLineBound: a client of `hermes mcp serve` over stdio sends a
// 256 MB line. The server never holds it (its peak memory stays far under
// the line's size), answers it with the JSON-RPC error the HTTP side gives
// (id null, naming mcp_serve.max_request_mb), and answers the next
// request.
func TestStdioLineBound(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 256 MB through a pipe")
	}
	const limit = 4 << 20
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioChildEnv+"="+strconv.Itoa(limit))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	replies := make(chan map[string]any, 16)
	go func() {
		defer close(replies)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				replies <- m
			}
		}
		if sc.Err() != nil {
			// A reply over 1 MB: the server echoed what it should
			// have refused.
			replies <- map[string]any{"over_1MB": sc.Err().Error()}
			go func() { _, _ = io.Copy(io.Discard, out) }()
		}
	}()
	next := func(what string) map[string]any {
		t.Helper()
		select {
		case m, ok := <-replies:
			if !ok {
				t.Errorf("the server's stdout ended before %s", what)
			}
			return m
		case <-time.After(5 * time.Minute):
			t.Fatalf("no answer for %s", what)
		}
		return nil
	}
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(in, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := next("initialize"); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// The 256 MB line: a tools/call whose argument never ends soon.
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":"`); err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for i := 0; i < 256; i++ {
		if _, err := in.Write(chunk); err != nil {
			t.Fatalf("writing the long line: %v", err)
		}
	}
	send(`"}}}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"y":"after"}}}`)

	cut := next("the long line")
	after := next("the request after the long line")
	peak := vmHWM(t, cmd.Process.Pid)
	t.Logf("serve peak memory with a 256 MB line: %d MB", peak>>20)
	if peak > 100<<20 {
		t.Errorf("serve peaked at %d MB for a 256 MB line; it must not hold the line (limit 4 MB)", peak>>20)
	}
	e, _ := cut["error"].(map[string]any)
	if id, has := cut["id"]; !has || id != nil || e == nil {
		t.Fatalf("the long line's answer is %v, want an error with id null", cut)
	}
	if msg, _ := e["message"].(string); msg != serve.RequestTooLargeMessage(limit) || e["code"] != float64(-32600) {
		t.Fatalf("the long line's error is %v, want -32600 %q", e, serve.RequestTooLargeMessage(limit))
	}
	if after["id"] != float64(3) || !strings.Contains(fmt.Sprint(after["result"]), "after") {
		t.Fatalf("the request after the long line got %v", after)
	}
}

// TestLineLimiterLines: lines under the limit pass whole and in order,
// one exactly at the limit passes, one over it is replaced by the error
// and the next passes.
func TestLineLimiterLines(t *testing.T) {
	const limit = 100
	long := strings.Repeat("x", 300)
	atLimit := strings.Repeat("y", limit-1)
	input := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + atLimit + "\n" + long + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	var out bytes.Buffer
	s := serve.NewServer(echoServerDesc(), echoCaller{}, serve.ServerOptions{})
	if err := serve.ServeStdio(context.Background(), s, strings.NewReader(input), &out, serve.StdioOptions{MaxRequestBytes: limit}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{`"id":1,"result"`, `"id":2,"result"`, `"code":-32700`, `"id":null,"error":{"code":-32600,"message":"Request Entity Too Large: over 100 bytes (mcp_serve.max_request_mb)"`} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %s:\n%s", want, got)
		}
	}
	if strings.Count(got, "-32600") != 1 || strings.Count(got, "-32700") != 1 {
		t.Errorf("want one cut line (the 300-byte one) and one parse error (the 99 y's):\n%s", got)
	}
}

// gatedCaller answers a call when released, or with its context's error
// when that ends first.
type gatedCaller struct {
	started chan struct{}
	release chan struct{}
}

func (g gatedCaller) Call(ctx context.Context, name string, args json.RawMessage) (bridge.Result, error) {
	close(g.started)
	select {
	case <-g.release:
		if ctx.Err() != nil {
			return bridge.Result{}, ctx.Err()
		}
		return bridge.Result{Text: "finished"}, nil
	case <-ctx.Done():
		return bridge.Result{}, ctx.Err()
	}
}

// TestStdioFinishesCallsAfterInputEnds: a client that sends a call and
// closes stdin still gets the call's answer (it got isError "context
// canceled": mcp-go cancels running requests when its input ends), and the
// server returns once it is written.
func TestStdioFinishesCallsAfterInputEnds(t *testing.T) {
	t.Parallel()
	g := gatedCaller{started: make(chan struct{}), release: make(chan struct{})}
	s := serve.NewServer(echoServerDesc(), g, serve.ServerOptions{})
	inR, inW := io.Pipe()
	var out safeBuffer
	done := make(chan error, 1)
	go func() {
		done <- serve.ServeStdio(context.Background(), s, inR, &out, serve.StdioOptions{Drain: 10 * time.Minute})
	}()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"call-2","method":"tools/call","params":{"name":"echo","arguments":{}}}`,
	} {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	<-g.started
	inW.Close()
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, `"id":"call-2","result"`) || !strings.Contains(got, "finished") || strings.Contains(got, "context canceled") {
		t.Errorf("the call was not answered with its result:\n%s", got)
	}
}

// safeBuffer is a bytes.Buffer for one writer and a reader afterwards.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
