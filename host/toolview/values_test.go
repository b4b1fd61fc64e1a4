package toolview

import (
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/mark3labs/mcp-go/mcp"
)

// The tests write what a server answers in mcp-go's types, as the wire
// decodes it; these helpers hand it to the renderers as hermes's values,
// converted where the host converts it (host/session).

func renderCallResult(server string, res *mcp.CallToolResult, cache *MediaCache) string {
	return RenderCallResult(server, callValue(res), cache)
}

func renderCallResultMax(server string, res *mcp.CallToolResult, cache *MediaCache, maxResult int) string {
	return RenderCallResultMax(server, callValue(res), cache, maxResult)
}

func callValue(res *mcp.CallToolResult) *mcpvalue.CallResult {
	if res == nil {
		return nil
	}
	v := session.CallResultValue(res)
	return &v
}

func renderResourceList(res *mcp.ListResourcesResult) string {
	if res == nil {
		return RenderResourceList(nil)
	}
	return RenderResourceList(session.ResourceValues(res.Resources))
}

func renderReadResource(res *mcp.ReadResourceResult, cache *MediaCache) string {
	return RenderReadResource(session.ReadResultValue(res), cache)
}

func renderReadResourceMax(server string, res *mcp.ReadResourceResult, cache *MediaCache, maxResult int) string {
	return RenderReadResourceMax(server, session.ReadResultValue(res), cache, maxResult)
}

func renderPromptList(res *mcp.ListPromptsResult) string {
	if res == nil {
		return RenderPromptList(nil)
	}
	return RenderPromptList(session.PromptValues(res.Prompts))
}

func renderGetPrompt(server string, res *mcp.GetPromptResult, cache *MediaCache) string {
	return RenderGetPrompt(server, session.PromptResultValue(res), cache)
}

func renderGetPromptMax(server string, res *mcp.GetPromptResult, cache *MediaCache, maxResult int) string {
	return RenderGetPromptMax(server, session.PromptResultValue(res), cache, maxResult)
}

func convertTool(server string, t mcp.Tool) ToolDef { return ConvertTool(server, session.ToolValue(t)) }
