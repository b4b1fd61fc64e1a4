package toolview

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// The exact utility schemas (names use this host's mcp_<s>_ form).
var wantUtilitySchemas = map[string]string{
	UtilityListResources: `{"name":"mcp_my_srv_list_resources","description":"List available resources from MCP server 'my-srv'","parameters":{"type":"object","properties":{}}}`,
	UtilityReadResource:  `{"name":"mcp_my_srv_read_resource","description":"Read a resource by URI from MCP server 'my-srv'","parameters":{"type":"object","properties":{"uri":{"type":"string","description":"URI of the resource to read"}},"required":["uri"]}}`,
	UtilityListPrompts:   `{"name":"mcp_my_srv_list_prompts","description":"List available prompts from MCP server 'my-srv'","parameters":{"type":"object","properties":{}}}`,
	UtilityGetPrompt:     `{"name":"mcp_my_srv_get_prompt","description":"Get a prompt by name from MCP server 'my-srv'","parameters":{"type":"object","properties":{"name":{"type":"string","description":"Name of the prompt to retrieve"},"arguments":{"type":"object","description":"Optional arguments to pass to the prompt","properties":{},"additionalProperties":true}},"required":["name"]}}`,
}

func TestUtilityTools(t *testing.T) {
	tests := []struct {
		name                                 string
		hasRes, hasPrompts, allowRes, allowP bool
		want                                 []string
	}{
		{"all", true, true, true, true, []string{UtilityListResources, UtilityReadResource, UtilityListPrompts, UtilityGetPrompt}},
		{"resources only capability", true, false, true, true, []string{UtilityListResources, UtilityReadResource}},
		{"prompts only capability", false, true, true, true, []string{UtilityListPrompts, UtilityGetPrompt}},
		{"resources disabled by config", true, true, false, true, []string{UtilityListPrompts, UtilityGetPrompt}},
		{"prompts disabled by config", true, true, true, false, []string{UtilityListResources, UtilityReadResource}},
		{"no capabilities", false, false, true, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defs := UtilityTools("my-srv", tt.hasRes, tt.hasPrompts, tt.allowRes, tt.allowP)
			if len(defs) != len(tt.want) {
				t.Fatalf("got %d tools, want %d", len(defs), len(tt.want))
			}
			for i, d := range defs {
				kind := tt.want[i]
				if d.Utility != kind || d.OriginalName != kind || d.Server != "my-srv" {
					t.Errorf("tool %d: %+v", i, d)
				}
				got := canonical(t, map[string]any{"name": d.Name, "description": d.Description, "parameters": d.Parameters})
				if want := canonical(t, wantUtilitySchemas[kind]); got != want {
					t.Errorf("%s:\ngot  %s\nwant %s", kind, got, want)
				}
			}
		})
	}
	// Each call returns fresh maps.
	a := UtilityTools("s", true, false, true, false)
	a[1].Parameters["properties"].(map[string]any)["uri"].(map[string]any)["type"] = "number"
	b := UtilityTools("s", true, false, true, false)
	if b[1].Parameters["properties"].(map[string]any)["uri"].(map[string]any)["type"] != "string" {
		t.Error("utility schemas share state between calls")
	}
}

func TestUtilityRenderGolden(t *testing.T) {
	cache := NewMediaCache(filepath.Join(t.TempDir(), "cache"))
	blob := mcp.BlobResourceContents{URI: "file:///img/logo.png", MIMEType: "image/png", Blob: b64("LOGO")}
	tests := []struct {
		name   string
		render func() string
	}{
		{"resource_list", func() string {
			return renderResourceList(&mcp.ListResourcesResult{Resources: []mcp.Resource{
				{URI: "file:///a.txt", Name: "a.txt", Description: "First <file>", MIMEType: "text/plain"},
				{URI: "mem://b", Name: "b"},
			}})
		}},
		{"resource_list_empty", func() string { return renderResourceList(&mcp.ListResourcesResult{}) }},
		{"resource_list_nil", func() string { return renderResourceList(nil) }},
		{"read_resource_text", func() string {
			return renderReadResource(&mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
				mcp.TextResourceContents{URI: "file:///a.txt", Text: "line 1"},
				&mcp.TextResourceContents{URI: "file:///a.txt", Text: "line 2"},
			}}, cache)
		}},
		{"read_resource_blob", func() string {
			return renderReadResource(&mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
				mcp.TextResourceContents{URI: "file:///a.txt", Text: "caption"}, blob,
			}}, cache)
		}},
		{"read_resource_blob_no_cache", func() string {
			return renderReadResource(&mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&blob}}, nil)
		}},
		{"read_resource_nil", func() string { return renderReadResource(nil, cache) }},
		{"prompt_list", func() string {
			return renderPromptList(&mcp.ListPromptsResult{Prompts: []mcp.Prompt{
				{Name: "summarize", Description: "Summarize text", Arguments: []mcp.PromptArgument{
					{Name: "text", Description: "Text to summarize", Required: true},
					{Name: "style"},
				}},
				{Name: "plain"},
			}})
		}},
		{"prompt_list_nil", func() string { return renderPromptList(nil) }},
		{"get_prompt", func() string {
			return renderGetPrompt("my-srv", &mcp.GetPromptResult{
				Description: "A review prompt",
				Messages: []mcp.PromptMessage{
					mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Review this")),
					mcp.NewPromptMessage(mcp.RoleUser, mcp.NewImageContent(b64("PNGDATA"), "image/png")),
					mcp.NewPromptMessage(mcp.RoleAssistant, mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "mem://ctx", Text: "context"})),
					mcp.NewPromptMessage(mcp.RoleUser, mcp.NewResourceLink("file:///x", "x", "", "")),
				},
			}, cache)
		}},
		{"get_prompt_no_description", func() string {
			return renderGetPrompt("s", &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("hi")),
			}}, nil)
		}},
		{"get_prompt_nil", func() string { return renderGetPrompt("s", nil, nil) }},
		{"missing_uri", func() string { return MissingParamError("uri") }},
		{"missing_name", func() string { return MissingParamError("name") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, "utility/"+tt.name, tt.render(), cache)
		})
	}
}

func TestReadResourceBlobSaved(t *testing.T) {
	cache := NewMediaCache(filepath.Join(t.TempDir(), "cache"))
	got := renderReadResource(&mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
		mcp.BlobResourceContents{URI: "file:///img/logo.png", MIMEType: "image/png", Blob: b64("LOGO")},
	}}, cache)
	if want := filepath.Join(cache.dir, sha("LOGO")+".png"); !strings.Contains(got, want) {
		t.Errorf("%s does not name %s", got, want)
	}
}
