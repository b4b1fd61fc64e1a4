package session_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/internal/testlog"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/mark3labs/mcp-go/mcp"
)

// proc is a server process started by a test.
type proc struct {
	cmd  *exec.Cmd
	URL  string // base URL printed by the server, e.g. http://127.0.0.1:PORT
	done chan struct{}
}

// stop kills the process and waits for it.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// startTestServer runs hermes-testserver with args and waits for its
// "listening on URL" line.
func startTestServer(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(filepath.Join(dir, "hermes-testserver"), args...)
	return startListening(t, cmd, "listening on ")
}

// startListening starts cmd and waits until a stdout or stderr line
// contains marker followed by a URL.
func startListening(t testing.TB, cmd *exec.Cmd, marker string) *proc {
	t.Helper()
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = pw.Close()
		close(p.done)
	}()
	urlc := make(chan string, 1)
	var tail strings.Builder
	var tailMu sync.Mutex
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			tailMu.Lock()
			if tail.Len() < 4000 {
				tail.WriteString(line + "\n")
			}
			tailMu.Unlock()
			if i := strings.Index(line, marker); i >= 0 && !sent {
				rest := strings.Fields(line[i+len(marker):])
				if len(rest) == 0 {
					rest = []string{""}
				}
				urlc <- rest[0]
				sent = true
			}
		}
		if !sent {
			close(urlc)
		}
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.stop()
		}
	})
	select {
	case u, ok := <-urlc:
		if !ok {
			tailMu.Lock()
			defer tailMu.Unlock()
			t.Fatalf("%s exited before listening:\n%s", cmd.Path, tail.String())
		}
		p.URL = u
		return p
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start listening within 30s", cmd.Path)
	}
	return nil
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// remote is a server entry for a URL.
func remote(transport, url string) *config.Server {
	return &config.Server{
		Name: "ts", Transport: transport, URL: url, SSLVerify: true, Enabled: true,
		ConnectTimeout: 15 * time.Second, Timeout: 30 * time.Second,
	}
}

func mustConnect(t *testing.T, srv *config.Server, d session.Deps) *session.Session {
	t.Helper()
	s, err := session.Connect(context.Background(), session.PlanFor(srv, d.Home, d.Environ), d)
	if err != nil {
		t.Fatalf("connect %s: %v", srv.URL, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func callText(t *testing.T, s *session.Session, tool string, args map[string]any) string {
	t.Helper()
	text, err := callTool(s, tool, args)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return text
}

func callTool(s *session.Session, tool string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := s.Client.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return b.String(), errors.New("tool error: " + b.String())
	}
	return b.String(), nil
}

// sdkErr returns the transport error behind a failure: session.Connect
// reports it as a ConnectError with the same code and message.
func sdkErr(t *testing.T, err error) *sdk.Error {
	t.Helper()
	var se *sdk.Error
	if errors.As(err, &se) {
		return se
	}
	t.Fatalf("error %v (%T) carries no transport error", err, err)
	return nil
}

func connectErr(t *testing.T, err error) *session.ConnectError {
	t.Helper()
	var ce *session.ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a ConnectError", err, err)
	}
	return ce
}

// startRegistry runs the host's registry over one server entry, as the
// agent does, and waits until it is connected. It returns the registry and
// its log.
func startRegistry(t *testing.T, srv *config.Server, d session.Deps) (*registry.Manager, *testlog.Buffer) {
	t.Helper()
	logs := &testlog.Buffer{}
	d.Logger = hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Info, Output: logs})
	if srv.KeepaliveInterval == 0 {
		srv.KeepaliveInterval = config.DefaultKeepaliveInterval
	}
	m := registry.New(registry.Options{Servers: []*config.Server{srv}, Deps: d, Timings: registry.Timings{
		InitialBackoff: 20 * time.Millisecond, MaxBackoff: 80 * time.Millisecond,
		SessionWait: 3 * time.Second, ReconnectWait: 10 * time.Second, ShutdownWait: 5 * time.Second,
	}})
	t.Cleanup(func() { _ = m.Close() })
	if err := m.Start(context.Background()); err != nil {
		t.Fatalf("registry start: %v", err)
	}
	for _, st := range m.Status() {
		if st.Name == srv.Name && st.State != registry.StateConnected {
			t.Fatalf("registry status %+v", st)
		}
	}
	return m, logs
}

// registryCall calls a tool of srv through the registry and returns its
// text.
func registryCall(t *testing.T, m *registry.Manager, server, tool string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	raw, _ := json.Marshal(args)
	res, err := m.CallTool(ctx, server, tool, raw)
	if err != nil {
		t.Fatalf("registry call %s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if c.Type == mcpvalue.TypeText {
			b.WriteString(c.Text)
		}
	}
	if res.IsError {
		t.Fatalf("registry call %s: tool error %s", tool, b.String())
	}
	return b.String()
}

// wantSessionExpired fails unless err is the plugin's report of a session
// the server no longer knows.
func wantSessionExpired(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("a call on a session the server forgot succeeded")
	}
	if se := sdkErr(t, err); se.Code != sdk.CodeSessionExpired {
		t.Fatalf("code %q, want %q: %v", se.Code, sdk.CodeSessionExpired, err)
	}
}

// handlers answers server-initiated requests with fixed values.
type handlers struct {
	mu       sync.Mutex
	sampled  []string
	elicited []string
}

func (h *handlers) Sample(_ context.Context, req mcpvalue.SamplingRequest) (mcpvalue.SamplingResult, error) {
	prompt := ""
	if len(req.Messages) > 0 && len(req.Messages[0].Content) > 0 {
		prompt = req.Messages[0].Content[0].Text
	}
	h.mu.Lock()
	h.sampled = append(h.sampled, prompt)
	h.mu.Unlock()
	return mcpvalue.SamplingResult{
		Role:       "assistant",
		Content:    []mcpvalue.SamplingContent{{Type: mcpvalue.TypeText, Text: "model says: " + prompt}},
		Model:      "test-model",
		StopReason: "endTurn",
	}, nil
}

func (h *handlers) ListRoots(context.Context) ([]mcpvalue.Root, error) {
	return []mcpvalue.Root{{URI: "file:///project", Name: "project"}}, nil
}

func (h *handlers) Elicit(_ context.Context, req mcpvalue.ElicitationRequest) (mcpvalue.ElicitationResult, error) {
	h.mu.Lock()
	h.elicited = append(h.elicited, req.Message)
	h.mu.Unlock()
	content := map[string]any{"value": "yes"}
	// Fill every required property from the schema's defaults or a value of
	// its type, so any form is accepted.
	raw := req.RequestedSchema
	var schema struct {
		Properties map[string]struct {
			Type    string `json:"type"`
			Format  string `json:"format"`
			Default any    `json:"default"`
			Enum    []any  `json:"enum"`
		} `json:"properties"`
	}
	if json.Unmarshal(raw, &schema) == nil {
		for k, p := range schema.Properties {
			switch {
			case p.Default != nil:
				content[k] = p.Default
			case len(p.Enum) > 0:
				content[k] = p.Enum[0]
			case p.Type == "boolean":
				content[k] = true
			case p.Type == "number" || p.Type == "integer":
				content[k] = 1
			case p.Format == "email":
				content[k] = "someone@example.com"
			case p.Format == "uri":
				content[k] = "https://example.com/"
			case p.Format == "date":
				content[k] = "2000-01-01"
			case p.Format == "date-time":
				content[k] = "2000-01-01T00:00:00Z"
			default:
				content[k] = "yes"
			}
		}
	}
	return mcpvalue.ElicitationResult{Action: mcpvalue.ElicitationAccept, Content: content}, nil
}

func itoa(i int) string { return strconv.Itoa(i) }

// connectOnce connects and, on success, closes again: for tests that expect
// a failure.
func connectOnce(srv *config.Server, d session.Deps) (*session.Session, error) {
	s, err := session.Connect(context.Background(), session.PlanFor(srv, d.Home, d.Environ), d)
	if err == nil {
		_ = s.Close()
	}
	return s, err
}

// writeConcat writes the files' contents one after the other into path.
func writeConcat(t *testing.T, path string, files ...string) {
	t.Helper()
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if err := os.WriteFile(path, all, 0o600); err != nil {
		t.Fatal(err)
	}
}
