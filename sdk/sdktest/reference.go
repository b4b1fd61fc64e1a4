package sdktest

import (
	"context"
	"encoding/json"
	"os"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ServeEnv is the environment variable that makes ServeReferenceIfAsked
// serve the reference server.
const ServeEnv = "HERMES_SDKTEST_SERVE"

// ServeReferenceIfAsked turns the current process into the reference MCP
// server on stdio when ServeEnv is set, and never returns then. Call it
// first thing in TestMain, so that the test binary can be the server a
// stdio-like plugin starts (see ReferenceCommand).
func ServeReferenceIfAsked() {
	if os.Getenv(ServeEnv) != "1" {
		return
	}
	_ = server.ServeStdio(NewReferenceServer())
	os.Exit(0)
}

// ReferenceCommand returns the command and environment that start the
// reference server over stdio: the running test binary with ServeEnv set.
func ReferenceCommand() (string, []string) {
	self, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return self, []string{ServeEnv + "=1", "PATH=" + os.Getenv("PATH")}
}

// WaitingNotification is sent by the reference server's wait tool once it
// has the request.
const WaitingNotification = "notifications/sdktest/waiting"

// NewReferenceServer returns the reference MCP server CheckTransport talks
// to. Its tools:
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
		_ = s.SendNotificationToClient(ctx, WaitingNotification, nil)
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
