package toolview

import (
	"fmt"
	"strings"

	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// Utility tool kinds: the tool-name suffix of each utility tool, also the
// value of ToolDef.Utility.
const (
	// UtilityListResources lists the server's resources (resources/list).
	UtilityListResources = "list_resources"
	// UtilityReadResource reads one resource by URI (resources/read).
	UtilityReadResource = "read_resource"
	// UtilityListPrompts lists the server's prompts (prompts/list).
	UtilityListPrompts = "list_prompts"
	// UtilityGetPrompt gets one prompt by name (prompts/get).
	UtilityGetPrompt = "get_prompt"
)

// UtilityTools returns the resource and prompt utility tools of server, in
// the order list_resources, read_resource, list_prompts, get_prompt. The
// resource pair is included when the server has the resources capability
// and the config allows it; the prompt pair likewise.
func UtilityTools(server string, hasResources, hasPrompts, allowResources, allowPrompts bool) []ToolDef {
	var out []ToolDef
	add := func(kind, desc string, params map[string]any) {
		out = append(out, ToolDef{
			Name:         ToolName(server, kind),
			Description:  fmt.Sprintf(desc, server),
			Parameters:   params,
			Server:       server,
			OriginalName: kind,
			Utility:      kind,
		})
	}
	if hasResources && allowResources {
		add(UtilityListResources, "List available resources from MCP server '%s'", emptyObjectSchema())
		add(UtilityReadResource, "Read a resource by URI from MCP server '%s'", map[string]any{
			"type": "object",
			"properties": map[string]any{
				"uri": map[string]any{"type": "string", "description": "URI of the resource to read"},
			},
			"required": []any{"uri"},
		})
	}
	if hasPrompts && allowPrompts {
		add(UtilityListPrompts, "List available prompts from MCP server '%s'", emptyObjectSchema())
		add(UtilityGetPrompt, "Get a prompt by name from MCP server '%s'", map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name": map[string]any{"type": "string", "description": "Name of the prompt to retrieve"},
				"arguments": map[string]any{
					"type":                 "object",
					"description":          "Optional arguments to pass to the prompt",
					"properties":           map[string]any{},
					"additionalProperties": true,
				},
			},
			"required": []any{"name"},
		})
	}
	return out
}

// MissingParamError renders the error for a utility call without a required
// argument: {"error":"Missing required parameter '<name>'"}.
func MissingParamError(name string) string { return ErrorResult(missingParam(name)) }

// missingParam says that the parameter name is missing.
func missingParam(name string) string { return fmt.Sprintf("Missing required parameter '%s'", name) }

type resourceEntry struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

type templateEntry struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// RenderResourceList renders a resources/list result:
// {"resources":[{"uri","name","description"?,"mimeType"?}]}.
func RenderResourceList(resources []mcpvalue.Resource) string {
	return RenderResources(resources, nil)
}

// RenderResources renders what list_resources returns: the resources
// (resources/list) and, when the server has any, its resource templates
// (resources/templates/list), whose URIs the model fills in to read:
// {"resources":[{"uri","name","description"?,"mimeType"?}],
// "resourceTemplates"?:[{"uriTemplate","name","description"?,"mimeType"?}]}.
func RenderResources(resources []mcpvalue.Resource, templates []mcpvalue.ResourceTemplate) string {
	entries := []resourceEntry{}
	for _, r := range resources {
		entries = append(entries, resourceEntry{URI: r.URI, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType})
	}
	var tmpl []templateEntry
	for _, t := range templates {
		tmpl = append(tmpl, templateEntry{URITemplate: t.URITemplate, Name: t.Name, Description: t.Description, MIMEType: t.MIMEType})
	}
	return marshalJSON(struct {
		Resources []resourceEntry `json:"resources"`
		Templates []templateEntry `json:"resourceTemplates,omitempty"`
	}{entries, tmpl})
}

// RenderReadResource renders a resources/read result as {"result": text}
// with the default result limit (DefaultMaxResultBytes); see
// RenderReadResourceMax.
func RenderReadResource(res []mcpvalue.ResourceContents, cache *MediaCache) string {
	return RenderReadResourceMax("", res, cache, DefaultMaxResultBytes)
}

// RenderReadResourceMax renders a resources/read result of server as
// {"result": text}: text contents as they are, blob contents saved by cache
// and described (or "[binary data, N bytes]" without a cache), joined by
// newlines. Text over maxResult (the server's max_result_kb in bytes; 0 or
// less: DefaultMaxResultBytes) is saved by cache like an oversized tool
// result, and the model gets the note and the text's beginning.
func RenderReadResourceMax(server string, res []mcpvalue.ResourceContents, cache *MediaCache, maxResult int) string {
	if maxResult <= 0 {
		maxResult = DefaultMaxResultBytes
	}
	var parts []string
	for i := range res {
		s := res[i].Text
		if res[i].IsBlob {
			s = renderBlob(&res[i], cache, "[binary data, %d bytes]")
		}
		if s != "" {
			parts = append(parts, s)
		}
	}
	text := strings.Join(parts, "\n")
	if len(text) > maxResult {
		text = oversized(server, "resource", text, "text/plain", cache, maxResult)
	}
	return marshalJSON(struct {
		Result string `json:"result"`
	}{text})
}

type promptArgEntry struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

type promptEntry struct {
	Name        string           `json:"name"`
	Description string           `json:"description,omitempty"`
	Arguments   []promptArgEntry `json:"arguments,omitempty"`
}

// RenderPromptList renders a prompts/list result:
// {"prompts":[{"name","description"?,"arguments"?:[{"name","description"?,"required"?}]}]}.
// "required" appears only for required arguments.
func RenderPromptList(prompts []mcpvalue.Prompt) string {
	entries := []promptEntry{}
	for _, p := range prompts {
		e := promptEntry{Name: p.Name, Description: p.Description}
		for _, a := range p.Arguments {
			e.Arguments = append(e.Arguments, promptArgEntry{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		entries = append(entries, e)
	}
	return marshalJSON(struct {
		Prompts []promptEntry `json:"prompts"`
	}{entries})
}

type promptMessageEntry struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// RenderGetPrompt renders a prompts/get result of server with the default
// result limit (DefaultMaxResultBytes); see RenderGetPromptMax.
func RenderGetPrompt(server string, res *mcpvalue.PromptResult, cache *MediaCache) string {
	return RenderGetPromptMax(server, res, cache, DefaultMaxResultBytes)
}

// RenderGetPromptMax renders a prompts/get result of server:
// {"messages":[{"role","content"}],"description"?}. A message's content is
// its text; other content is rendered as in RenderCallResult (media saved by
// cache, resource links described).
//
// Messages (and description) whose text adds up to more than maxResult (the server's
// max_result_kb in bytes; 0 or less: DefaultMaxResultBytes) are saved by
// cache as that JSON, like an oversized tool result, and the model gets
// {"result": note, "description"?}: the note names the file, the limit and
// how to raise it, and shows the JSON's beginning.
func RenderGetPromptMax(server string, res *mcpvalue.PromptResult, cache *MediaCache, maxResult int) string {
	if maxResult <= 0 {
		maxResult = DefaultMaxResultBytes
	}
	msgs := []promptMessageEntry{}
	var desc string
	size := 0
	if res != nil {
		desc = res.Description
		for i := range res.Messages {
			m := &res.Messages[i]
			e := promptMessageEntry{Role: m.Role, Content: renderBlock(server, &m.Content, cache)}
			size += len(e.Content) + len(e.Role)
			msgs = append(msgs, e)
		}
	}
	if size+len(desc) > maxResult {
		whole := marshalJSON(struct {
			Messages    []promptMessageEntry `json:"messages"`
			Description string               `json:"description,omitempty"`
		}{msgs, desc})
		desc = preview(desc, min(previewBytes, maxResult/2))
		return marshalJSON(struct {
			Result      string `json:"result"`
			Description string `json:"description,omitempty"`
		}{oversized(server, "prompt", whole, "application/json", cache, maxResult), desc})
	}
	return marshalJSON(struct {
		Messages    []promptMessageEntry `json:"messages"`
		Description string               `json:"description,omitempty"`
	}{msgs, desc})
}
