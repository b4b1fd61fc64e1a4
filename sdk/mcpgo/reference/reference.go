// Package reference is the reference MCP server of sdktest built on
// mcp-go's server, for tests of transports that need a server mcp-go
// serves (Streamable HTTP, SSE). sdktest's own reference server is a small
// raw JSON-RPC one over stdio, without mcp-go.
package reference

import (
	"context"
	"encoding/json"
	"os"

	"github.com/hermes-agent/hermes/sdk/sdktest"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// NewReferenceServer returns an mcp-go server with the tools of sdktest's
// reference server. Its tools:
//
//   - echo {message}: returns message.
//   - roots: asks the client for its roots (a request of the server's own)
//     and returns them as JSON.
//   - wait: sends the notification notifications/sdktest/waiting, then
//     blocks until the request is cancelled or 30s pass.
//   - cancellations: how many wait calls were cancelled so far.
//   - exit {code}: the server process exits with code at once, without
//     answering (stdio only).
func NewReferenceServer() *server.MCPServer {
	var cancelled atomic.Int64
	s := server.NewMCPServer("sdktest-reference", "1.0.0", server.WithRoots())
	s.AddTool(mcp.NewTool("echo", mcp.WithString("message", mcp.Required())),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(r.GetString("message", "")), nil
		})
	s.AddTool(mcp.NewTool("roots"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := s.RequestRoots(ctx, mcp.ListRootsRequest{})
		if err != nil {
			return mcp.NewToolResultError("roots: " + err.Error()), nil
		}
		b, _ := json.Marshal(res.Roots)
		return mcp.NewToolResultText(string(b)), nil
	})
	s.AddTool(mcp.NewTool("wait"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_ = s.SendNotificationToClient(ctx, sdktest.WaitingNotification, nil)
		select {
		case <-ctx.Done():
			cancelled.Add(1)
			return nil, ctx.Err()
		case <-time.After(30 * time.Second):
			return mcp.NewToolResultText("not cancelled"), nil
		}
	})
	s.AddTool(mcp.NewTool("cancellations"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b, _ := json.Marshal(cancelled.Load())
		return mcp.NewToolResultText(string(b)), nil
	})
	s.AddTool(mcp.NewTool("exit", mcp.WithNumber("code")), func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Exit(r.GetInt("code", 0))
		return nil, nil
	})
	return s
}
