package toolview

import (
	"fmt"

	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// ToolDef is one tool as the model sees it, with where calls to it go.
type ToolDef struct {
	// Name is the model-visible name, mcp_<server>_<tool> (see ToolName).
	Name string
	// Description is the tool's description, or a fallback naming the tool
	// and its server when the server gave none.
	Description string
	// Parameters is the normalized JSON schema of the arguments.
	Parameters map[string]any
	// Server is the configured server name.
	Server string
	// OriginalName is the tool's MCP name, used when calling the server. For
	// a utility tool it equals Utility.
	OriginalName string
	// Utility is "" for a server's own tool, else one of UtilityListResources,
	// UtilityReadResource, UtilityListPrompts, UtilityGetPrompt.
	Utility string
}

// defaultDescription is the description of a tool whose server gave none:
// "MCP tool <tool> from <server>".
func defaultDescription(server, tool string) string {
	return fmt.Sprintf("MCP tool %s from %s", tool, server)
}

// ConvertTool turns one MCP tool of server into the tool the model sees:
// its name from ToolName, its description (or "MCP tool <tool> from
// <server>" when the server gave none) and its normalized input schema (see
// normalizeInputSchema for the rules). Filtering and collision checks are
// separate (Filter, NameTable).
func ConvertTool(server string, t mcpvalue.Tool) ToolDef {
	desc := t.Description
	if desc == "" {
		desc = defaultDescription(server, t.Name)
	}
	return ToolDef{
		Name:         ToolName(server, t.Name),
		Description:  desc,
		Parameters:   normalizeInputSchema(inputSchemaOf(t)),
		Server:       server,
		OriginalName: t.Name,
	}
}
