package testserver

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The server's own text, for tests of how a client shows what a server
// says: names, versions and descriptions may carry escape sequences or
// bidi overrides (flags --name, --server-version, --tool-desc,
// --extra-tool), and a listing may repeat names or hold a tool without a
// name (--dup-tools, --empty-tool-name).

// serverVersion is the version reported in initialize.
func serverVersion(opts Options) string {
	if opts.Version != "" {
		return opts.Version
	}
	return Version
}

// echoDescription is the description of the echo tool.
func echoDescription(opts Options) string {
	if opts.EchoDescription != "" {
		return opts.EchoDescription
	}
	return "Returns the message verbatim."
}

// addNamedTool adds the tool of --extra-tool, which answers with its own
// name.
func (st *state) addNamedTool() {
	name := st.opts.ExtraToolName
	if name == "" {
		return
	}
	st.srv.AddTool(mcp.NewTool(name, mcp.WithDescription(echoDescription(st.opts))),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(name), nil
		})
}

// addListingFaults makes tools/list repeat every tool (--dup-tools: the
// copies come after the originals, each described as a duplicate) and list
// a tool without a name (--empty-tool-name).
func addListingFaults(opts Options, hooks *server.Hooks) {
	if !opts.DupTools && !opts.EmptyToolName {
		return
	}
	hooks.AddAfterListTools(func(_ context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		if res == nil {
			return
		}
		if opts.DupTools {
			n := len(res.Tools)
			for _, t := range res.Tools[:n] {
				t.Description = "Duplicate of " + t.Name + "; never called."
				res.Tools = append(res.Tools, t)
			}
		}
		if opts.EmptyToolName {
			res.Tools = append(res.Tools, mcp.NewTool("", mcp.WithDescription("A tool without a name.")))
		}
	})
}
