package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/mark3labs/mcp-go/mcp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// goSDKServer serves a stateful Streamable HTTP server of the official MCP
// Go SDK (which speaks 2025-11-25 and earlier over a stateful handler) with
// one tool, add_tool {name}, that adds a tool. The SDK announces the change
// with notifications/tools/list_changed on the session's GET stream only.
func goSDKServer(t *testing.T) string {
	t.Helper()
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "gosdk-test", Version: "1.0.0"}, nil)
	object := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)
	srv.AddTool(&gomcp.Tool{Name: "add_tool", InputSchema: object}, func(_ context.Context, req *gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
		var args struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &args)
		srv.AddTool(&gomcp.Tool{Name: args.Name, InputSchema: object}, func(context.Context, *gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: args.Name}}}, nil
		})
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "added " + args.Name}}}, nil
	})
	h := gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	// /empty is the same server, except that it answers server/discover
	// with an empty result, as some older servers answer any method.
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &m) == nil && m.Method == "server/discover" {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestGoSDKListChanged: against a stateful go-sdk server, a tool added
// while serving reaches the host as tools/list_changed whichever way the
// revision was reached: pinned to 2025-11-25, or negotiated (server/discover
// lists no 2026-07-28 over a stateful handler, so the host falls back to
// initialize). The list_changed travels on the GET stream, which the host
// has the plugin open once the revision is known.
func TestGoSDKListChanged(t *testing.T) {
	t.Parallel()
	base := goSDKServer(t)
	for _, c := range []struct{ name, pin, path string }{
		{"2025-11-25", "2025-11-25", "/mcp"},
		{"auto", config.ProtocolAuto, "/mcp"},
		// A server answering server/discover with {}: hermes falls back
		// to initialize, and the GET stream opens all the same.
		{"auto, discover answered with {}", config.ProtocolAuto, "/empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pin := c.pin
			d, _ := deps(t)
			got := make(chan string, 16)
			d.OnNotification = func(_ string, n mcpvalue.Notification) { got <- n.Method }
			s := mustConnect(t, at(remote("http", base+c.path), pin), d)
			if s.Protocol.Revision != "2025-11-25" {
				t.Fatalf("protocol %+v", s.Protocol)
			}
			if pin == config.ProtocolAuto && (s.Protocol.Source != "negotiated" || !strings.Contains(s.Protocol.Why, "server/discover")) {
				t.Fatalf("protocol %+v, want it negotiated after the discover probe", s.Protocol)
			}
			s.Listen(nil)
			name := "fresh_" + strings.NewReplacer("-", "_", " ", "_", ",", "", "{}", "empty").Replace(c.name)
			if text := callText(t, s, "add_tool", map[string]any{"name": name}); text != "added "+name {
				t.Fatalf("add_tool = %q", text)
			}
			waitNotification(t, got, mcp.MethodNotificationToolsListChanged)
		})
	}
}
