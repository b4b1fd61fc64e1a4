package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/sdk/bridge"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Caller runs one tool call; *Bridge is the Caller of `hermes mcp serve`.
type Caller interface {
	Call(ctx context.Context, name string, args json.RawMessage) (bridge.Result, error)
}

// ServerOptions configure NewServer.
type ServerOptions struct {
	// Version is the server's version when the description has none
	// (hermes's own version).
	Version string
	// CallTimeout bounds one tool call (mcp_serve.call_timeout); zero
	// means no bound beyond the client's.
	CallTimeout time.Duration
	// Logger receives one line per failed call.
	Logger hclog.Logger
}

// NewServer builds the MCP server of desc whose tool calls c runs: the
// tools with their input and output schemas and annotations, the
// instructions, tools only (no resources or prompts).
func NewServer(desc bridge.Description, c Caller, o ServerOptions) *server.MCPServer {
	log := o.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	version := desc.Version
	if version == "" {
		version = o.Version
	}
	opts := []server.ServerOption{server.WithToolCapabilities(false), server.WithRecovery()}
	if desc.Instructions != "" {
		opts = append(opts, server.WithInstructions(desc.Instructions))
	}
	s := server.NewMCPServer(desc.Name, version, opts...)
	for _, t := range desc.Tools {
		s.AddTool(mcpTool(t), handler(t.Name, c, o.CallTimeout, log))
	}
	return s
}

// mcpTool is the MCP form of a bridge tool.
func mcpTool(t bridge.Tool) mcp.Tool {
	tool := mcp.NewToolWithRawSchema(t.Name, t.Description, t.InputSchema)
	if len(t.OutputSchema) > 0 {
		tool.RawOutputSchema = t.OutputSchema
	}
	readOnly, destructive := t.ReadOnly, t.Destructive
	tool.Annotations = mcp.ToolAnnotation{Title: t.Title, ReadOnlyHint: &readOnly, DestructiveHint: &destructive}
	return tool
}

// handler forwards a call of tool name to c.
func handler(name string, c Caller, timeout time.Duration, log hclog.Logger) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := json.Marshal(req.GetRawArguments())
		if err != nil {
			return mcp.NewToolResultError(fmt.Sprintf("the arguments of %s are not JSON: %v", name, err)), nil
		}
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		res, err := c.Call(ctx, name, args)
		if err != nil {
			// The plugin ends the call at the same deadline, and its
			// answer may arrive before this context's own timer fires.
			if d, ok := ctx.Deadline(); ok && timeout > 0 && errors.Is(err, context.DeadlineExceeded) && (ctx.Err() != nil || !time.Now().Before(d)) {
				err = fmt.Errorf("the call took longer than %s; raise mcp_serve.call_timeout in config.yaml if it should run longer", timeout)
			}
			msg := termsafe.Escape(err.Error())
			log.Warn("tool call failed", "tool", name, "error", msg)
			return mcp.NewToolResultError(msg), nil
		}
		out := &mcp.CallToolResult{
			Content: []mcp.Content{mcp.NewTextContent(res.Text)},
			IsError: res.IsError,
		}
		if len(res.Structured) > 0 {
			out.StructuredContent = res.Structured
		}
		return out, nil
	}
}
