package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/sdk/mcpgo/pluginconn"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/sdktest"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// newTestTransport builds a transport without connecting it.
func newTestTransport(t *testing.T, cfg transport.Config) *httpTransport {
	t.Helper()
	if cfg.Server == "" {
		cfg.Server = "srv"
	}
	tr, err := newTransport(cfg, nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// fakeHost is a transport.Host for unit tests.
type fakeHost struct {
	headers   func(context.Context, transport.HeadersRequest) (map[string]string, error)
	challenge func(context.Context, transport.ChallengeRequest) (transport.ChallengeAnswer, error)

	mu       sync.Mutex
	warnings []*sdk.Error
}

func (h *fakeHost) Headers(ctx context.Context, req transport.HeadersRequest) (map[string]string, error) {
	return h.headers(ctx, req)
}

func (h *fakeHost) Challenge(ctx context.Context, c transport.ChallengeRequest) (transport.ChallengeAnswer, error) {
	if h.challenge == nil {
		return transport.ChallengeAnswer{}, sdk.NewError(sdk.CodeAuth, "no challenge handler")
	}
	return h.challenge(ctx, c)
}

func (h *fakeHost) Warn(w *sdk.Error) {
	h.mu.Lock()
	h.warnings = append(h.warnings, w)
	h.mu.Unlock()
}

// sessions is a session id manager whose sessions the test can end, as a
// server that restarted or expired them would.
type sessions struct {
	mu    sync.Mutex
	known map[string]bool
	next  int
}

func (s *sessions) Generate() string {
	s.mu.Lock()
	s.next++
	id := fmt.Sprintf("session-%d", s.next)
	s.known[id] = true
	s.mu.Unlock()
	return id
}

func (s *sessions) Validate(id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.known[id] {
		return false, errors.New("session not found")
	}
	return false, nil
}

func (s *sessions) Terminate(id string) (bool, error) {
	s.mu.Lock()
	delete(s.known, id)
	s.mu.Unlock()
	return false, nil
}

// forget ends every session.
func (s *sessions) forget() {
	s.mu.Lock()
	s.known = map[string]bool{}
	s.mu.Unlock()
}

// mcpServer is an in-process MCP server over Streamable HTTP (or SSE) with
// a few tools: echo {message}, sleep {ms} and auth (the Authorization
// header of the call).
type mcpServer struct {
	*httptest.Server
	URL      string // the MCP endpoint
	sessions *sessions
	inits    atomic.Int32 // initialize requests seen
	mcp      *server.MCPServer
}

type serverOpts struct {
	sse bool
	tls bool
	// wrap, when set, wraps the MCP handler (faults, header checks).
	wrap func(http.Handler) http.Handler
	// stateless serves Streamable HTTP without sessions, as a server of
	// the 2026-07-28 revision does (it then speaks every revision).
	stateless bool
}

type authKey struct{}

func newMCPServer(t *testing.T, o serverOpts) *mcpServer {
	t.Helper()
	ms := &mcpServer{sessions: &sessions{known: map[string]bool{}}}
	srv := server.NewMCPServer("plugin-test", "1.0.0", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("echo", mcp.WithString("message")), func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(r.GetString("message", "")), nil
	})
	srv.AddTool(mcp.NewTool("sleep", mcp.WithNumber("ms")), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-time.After(time.Duration(r.GetFloat("ms", 0)) * time.Millisecond):
			return mcp.NewToolResultText("slept"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	srv.AddTool(mcp.NewTool("auth"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s, _ := ctx.Value(authKey{}).(string)
		return mcp.NewToolResultText(s), nil
	})
	withAuth := func(ctx context.Context, r *http.Request) context.Context {
		return context.WithValue(ctx, authKey{}, r.Header.Get("Authorization"))
	}
	var h http.Handler
	path := "/mcp"
	if o.sse {
		h = server.NewSSEServer(srv, server.WithSSEContextFunc(withAuth))
		path = "/sse"
	} else {
		opts := []server.StreamableHTTPOption{server.WithHTTPContextFunc(withAuth)}
		if o.stateless {
			opts = append(opts, server.WithStateLess(true))
		} else {
			opts = append(opts, server.WithSessionIdManager(ms.sessions))
		}
		h = server.NewStreamableHTTPServer(srv, opts...)
	}
	ms.mcp = srv
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if m, _ := peekMethod(r); m == string(mcp.MethodInitialize) {
				ms.inits.Add(1)
			}
		}
		h.ServeHTTP(w, r)
	})
	var top http.Handler = counted
	if o.wrap != nil {
		top = o.wrap(counted)
	}
	if o.tls {
		ms.Server = httptest.NewTLSServer(top)
	} else {
		ms.Server = httptest.NewServer(top)
	}
	t.Cleanup(ms.Server.Close)
	ms.URL = ms.Server.URL + path
	return ms
}

// testPlugin serves the plugin's opener in this process, behind the real
// contract (go-plugin's net/rpc and the message stream), and returns the
// host's handle on it.
func testPlugin(t *testing.T, log hclog.Logger) *pluginhost.Transport {
	t.Helper()
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return sdktest.TransportInProcess(t, opener(log))
}

// session is a host-side MCP client on a plugin connection.
type session struct {
	c    *client.Client
	conn *pluginhost.TransportConn
}

// connect opens a connection through the plugin and runs the handshake as
// the host does. A failure of either step is returned.
func connect(t *testing.T, cfg transport.Config, opts pluginconn.DialOptions) (*session, error) {
	t.Helper()
	return connectAt(t, cfg, opts, mcp.LATEST_LEGACY_PROTOCOL_VERSION)
}

// connectAt is connect asking for protocol revision version; "" lets
// mcp-go negotiate (server/discover first, then initialize).
func connectAt(t *testing.T, cfg transport.Config, opts pluginconn.DialOptions, version string) (*session, error) {
	t.Helper()
	if cfg.Server == "" {
		cfg.Server = "srv"
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr, conn, err := pluginconn.Dial(ctx, testPlugin(t, nil), cfg, opts)
	if err != nil {
		return nil, err
	}
	var copts []client.ClientOption
	if version != "" {
		copts = append(copts, client.WithProtocolVersion(version))
	}
	c := client.NewClient(tr, copts...)
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: version,
		ClientInfo:      mcp.Implementation{Name: "plugin-test", Version: "1"},
	}}); err != nil {
		return nil, err
	}
	return &session{c: c, conn: conn}, nil
}

func mustConnect(t *testing.T, cfg transport.Config, opts pluginconn.DialOptions) *session {
	t.Helper()
	s, err := connect(t, cfg, opts)
	if err != nil {
		t.Fatalf("connect %s: %v", cfg.URL, err)
	}
	return s
}

// call calls a tool and returns its text.
func (s *session) call(tool string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := s.c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
	if err != nil {
		return "", err
	}
	if len(res.Content) == 0 {
		return "", nil
	}
	if tc, ok := res.Content[0].(mcp.TextContent); ok {
		return tc.Text, nil
	}
	return "", errors.New("not text")
}

// sdkError returns the *sdk.Error behind err, failing the test when there
// is none.
func sdkError(t *testing.T, err error) *sdk.Error {
	t.Helper()
	var se *sdk.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) carries no *sdk.Error", err, err)
	}
	return se
}

// peekMethod returns the JSON-RPC method of a POST and puts the body back.
func peekMethod(r *http.Request) (string, error) {
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	var m struct {
		Method string `json:"method"`
	}
	err = json.Unmarshal(body, &m)
	return m.Method, err
}
