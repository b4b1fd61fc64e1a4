package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/mark3labs/mcp-go/mcp"
)

// This file is the one place where mcp-go's values become hermes's own
// (package mcpvalue) and back, with requests.go for what a server asks of
// the host: the rest of the host speaks mcpvalue.

// ToolValue is t as hermes keeps it: its schemas as the raw JSON the server
// wrote (RawInputSchema, RawOutputSchema, as the session's listing fills
// them), else its typed schemas encoded.
func ToolValue(t mcp.Tool) mcpvalue.Tool {
	v := mcpvalue.Tool{
		Name: t.Name, Title: t.Title, Description: t.Description,
		Annotations: AnnotationsValue(t.Annotations),
	}
	if len(t.RawInputSchema) > 0 {
		v.InputSchema = t.RawInputSchema
	} else if b, err := json.Marshal(t.InputSchema); err == nil {
		v.InputSchema = b
	}
	switch {
	case len(t.RawOutputSchema) > 0:
		v.OutputSchema = t.RawOutputSchema
	case t.OutputSchema.Type != "":
		if b, err := json.Marshal(t.OutputSchema); err == nil {
			v.OutputSchema = b
		}
	}
	return v
}

// ToolValues converts a listing (ToolValue of each tool).
func ToolValues(tools []mcp.Tool) []mcpvalue.Tool {
	out := make([]mcpvalue.Tool, len(tools))
	for i, t := range tools {
		out[i] = ToolValue(t)
	}
	return out
}

// AnnotationsValue is a tool's annotations as hermes keeps them.
func AnnotationsValue(a mcp.ToolAnnotation) mcpvalue.Annotations {
	return mcpvalue.Annotations{
		Title: a.Title, ReadOnly: a.ReadOnlyHint, Destructive: a.DestructiveHint,
		Idempotent: a.IdempotentHint, OpenWorld: a.OpenWorldHint,
	}
}

// CallResultValue is a tools/call result as hermes keeps it. A nil result
// is an empty one.
func CallResultValue(r *mcp.CallToolResult) mcpvalue.CallResult {
	if r == nil {
		return mcpvalue.CallResult{}
	}
	v := mcpvalue.CallResult{IsError: r.IsError, Content: ContentValues(r.Content)}
	if raw := bytes.TrimSpace(r.RawStructuredContent); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) && json.Valid(raw) {
		v.Structured = raw
	} else if r.StructuredContent != nil {
		v.Structured = encodeValue(r.StructuredContent)
	}
	if r.Meta != nil {
		v.Meta = encodeValue(r.Meta)
	}
	return v
}

// ContentValues converts content blocks (ContentValue of each).
func ContentValues(cs []mcp.Content) []mcpvalue.Content {
	if cs == nil {
		return nil
	}
	out := make([]mcpvalue.Content, 0, len(cs))
	for _, c := range cs {
		out = append(out, ContentValue(c))
	}
	return out
}

// ContentValue is one content block as hermes keeps it; a kind hermes does
// not render keeps its engine's type name (Content.Unknown).
func ContentValue(c mcp.Content) mcpvalue.Content {
	switch v := c.(type) {
	case mcp.TextContent:
		return textValue(&v)
	case *mcp.TextContent:
		if v != nil {
			return textValue(v)
		}
	case mcp.ImageContent:
		return mediaValue(mcpvalue.TypeImage, v.Data, v.MIMEType, v.Annotations, v.Meta)
	case *mcp.ImageContent:
		if v != nil {
			return mediaValue(mcpvalue.TypeImage, v.Data, v.MIMEType, v.Annotations, v.Meta)
		}
	case mcp.AudioContent:
		return mediaValue(mcpvalue.TypeAudio, v.Data, v.MIMEType, v.Annotations, v.Meta)
	case *mcp.AudioContent:
		if v != nil {
			return mediaValue(mcpvalue.TypeAudio, v.Data, v.MIMEType, v.Annotations, v.Meta)
		}
	case mcp.ResourceLink:
		return linkValue(&v)
	case *mcp.ResourceLink:
		if v != nil {
			return linkValue(v)
		}
	case mcp.EmbeddedResource:
		return embeddedValue(&v)
	case *mcp.EmbeddedResource:
		if v != nil {
			return embeddedValue(v)
		}
	case nil:
		return mcpvalue.Content{}
	default:
		return mcpvalue.Content{Unknown: fmt.Sprintf("%T", c)}
	}
	return mcpvalue.Content{}
}

func textValue(v *mcp.TextContent) mcpvalue.Content {
	return mcpvalue.Content{Type: mcpvalue.TypeText, Text: v.Text, Annotations: annotated(v.Annotations), Meta: metaValue(v.Meta)}
}

func mediaValue(kind, data, mimeType string, a *mcp.Annotations, m *mcp.Meta) mcpvalue.Content {
	return mcpvalue.Content{Type: kind, Data: data, MIMEType: mimeType, Annotations: annotated(a), Meta: metaValue(m)}
}

func linkValue(v *mcp.ResourceLink) mcpvalue.Content {
	return mcpvalue.Content{Type: mcpvalue.TypeResourceLink, URI: v.URI, Name: v.Name, Title: v.Title,
		Description: v.Description, MIMEType: v.MIMEType, Size: v.Size, Annotations: annotated(v.Annotations), Meta: metaValue(v.Meta)}
}

func embeddedValue(v *mcp.EmbeddedResource) mcpvalue.Content {
	rc := ResourceContentsValue(v.Resource)
	return mcpvalue.Content{Type: mcpvalue.TypeResource, Resource: rc, Annotations: annotated(v.Annotations), Meta: metaValue(v.Meta)}
}

// ResourceContentsValue is a resource's contents as hermes keeps them, nil
// for contents of neither kind.
func ResourceContentsValue(rc mcp.ResourceContents) *mcpvalue.ResourceContents {
	switch r := rc.(type) {
	case mcp.TextResourceContents:
		return &mcpvalue.ResourceContents{URI: r.URI, MIMEType: r.MIMEType, Text: r.Text, Meta: mapValue(r.Meta)}
	case *mcp.TextResourceContents:
		if r != nil {
			return &mcpvalue.ResourceContents{URI: r.URI, MIMEType: r.MIMEType, Text: r.Text, Meta: mapValue(r.Meta)}
		}
	case mcp.BlobResourceContents:
		return &mcpvalue.ResourceContents{URI: r.URI, MIMEType: r.MIMEType, Blob: r.Blob, IsBlob: true, Meta: mapValue(r.Meta)}
	case *mcp.BlobResourceContents:
		if r != nil {
			return &mcpvalue.ResourceContents{URI: r.URI, MIMEType: r.MIMEType, Blob: r.Blob, IsBlob: true, Meta: mapValue(r.Meta)}
		}
	}
	return nil
}

func annotated(a *mcp.Annotations) json.RawMessage {
	if a == nil {
		return nil
	}
	return encodeValue(a)
}

func metaValue(m *mcp.Meta) json.RawMessage {
	if m == nil {
		return nil
	}
	return encodeValue(m)
}

func mapValue(m map[string]any) json.RawMessage {
	if m == nil {
		return nil
	}
	return encodeValue(m)
}

// encodeValue encodes v as JSON without HTML escaping (as the host's
// renderers write it), nil when it cannot be encoded.
func encodeValue(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return nil
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// ResourceValues converts a resources/list listing.
func ResourceValues(rs []mcp.Resource) []mcpvalue.Resource {
	if rs == nil {
		return nil
	}
	out := make([]mcpvalue.Resource, len(rs))
	for i, r := range rs {
		out[i] = mcpvalue.Resource{URI: r.URI, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType}
	}
	return out
}

// TemplateValues converts a resources/templates/list listing.
func TemplateValues(ts []mcp.ResourceTemplate) []mcpvalue.ResourceTemplate {
	if ts == nil {
		return nil
	}
	out := make([]mcpvalue.ResourceTemplate, len(ts))
	for i, t := range ts {
		out[i] = mcpvalue.ResourceTemplate{Name: t.Name, Description: t.Description, MIMEType: t.MIMEType}
		if t.URITemplate != nil {
			out[i].URITemplate = t.URITemplate.Raw()
		}
	}
	return out
}

// ReadResultValue is the contents of a resources/read result (those of
// neither kind dropped).
func ReadResultValue(r *mcp.ReadResourceResult) []mcpvalue.ResourceContents {
	if r == nil {
		return nil
	}
	out := make([]mcpvalue.ResourceContents, 0, len(r.Contents))
	for _, rc := range r.Contents {
		if v := ResourceContentsValue(rc); v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// PromptValues converts a prompts/list listing.
func PromptValues(ps []mcp.Prompt) []mcpvalue.Prompt {
	if ps == nil {
		return nil
	}
	out := make([]mcpvalue.Prompt, len(ps))
	for i, p := range ps {
		out[i] = mcpvalue.Prompt{Name: p.Name, Description: p.Description}
		for _, a := range p.Arguments {
			out[i].Arguments = append(out[i].Arguments, mcpvalue.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
	}
	return out
}

// PromptResultValue converts a prompts/get result (nil: nil).
func PromptResultValue(r *mcp.GetPromptResult) *mcpvalue.PromptResult {
	if r == nil {
		return nil
	}
	out := &mcpvalue.PromptResult{Description: r.Description, Messages: make([]mcpvalue.PromptMessage, len(r.Messages))}
	for i, m := range r.Messages {
		out.Messages[i] = mcpvalue.PromptMessage{Role: string(m.Role), Content: ContentValue(m.Content)}
	}
	return out
}

// The session's requests in hermes's values: what the registry and the
// commands call instead of mcp-go's client.

// ListToolsPage lists one page of the server's tools (cursor "" for the
// first), each with its schemas as the server wrote them, and the cursor
// of the next page ("" when it was the last).
func (s *Session) ListToolsPage(ctx context.Context, cursor string) ([]mcpvalue.Tool, string, error) {
	var req mcp.ListToolsRequest
	req.Params.Cursor = mcp.Cursor(cursor)
	res, err := s.ListToolsByPage(ctx, req)
	if err != nil {
		return nil, "", Classify(err)
	}
	return ToolValues(res.Tools), string(res.NextCursor), nil
}

// ListResourcesPage lists one page of the server's resources.
func (s *Session) ListResourcesPage(ctx context.Context, cursor string) ([]mcpvalue.Resource, string, error) {
	var req mcp.ListResourcesRequest
	req.Params.Cursor = mcp.Cursor(cursor)
	res, err := s.Client.ListResourcesByPage(ctx, req)
	if err != nil {
		return nil, "", Classify(err)
	}
	return ResourceValues(res.Resources), string(res.NextCursor), nil
}

// ListResourceTemplatesPage lists one page of the server's resource
// templates.
func (s *Session) ListResourceTemplatesPage(ctx context.Context, cursor string) ([]mcpvalue.ResourceTemplate, string, error) {
	var req mcp.ListResourceTemplatesRequest
	req.Params.Cursor = mcp.Cursor(cursor)
	res, err := s.Client.ListResourceTemplatesByPage(ctx, req)
	if err != nil {
		return nil, "", Classify(err)
	}
	return TemplateValues(res.ResourceTemplates), string(res.NextCursor), nil
}

// ListPromptsPage lists one page of the server's prompts.
func (s *Session) ListPromptsPage(ctx context.Context, cursor string) ([]mcpvalue.Prompt, string, error) {
	var req mcp.ListPromptsRequest
	req.Params.Cursor = mcp.Cursor(cursor)
	res, err := s.Client.ListPromptsByPage(ctx, req)
	if err != nil {
		return nil, "", Classify(err)
	}
	return PromptValues(res.Prompts), string(res.NextCursor), nil
}

// ReadResource reads the resource at uri (resources/read).
func (s *Session) ReadResource(ctx context.Context, uri string) ([]mcpvalue.ResourceContents, error) {
	res, err := s.Client.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
	if err != nil {
		return nil, Classify(err)
	}
	return ReadResultValue(res), nil
}

// GetPrompt gets the prompt name with args (prompts/get).
func (s *Session) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcpvalue.PromptResult, error) {
	res, err := s.Client.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: name, Arguments: args}})
	if err != nil {
		return nil, Classify(err)
	}
	return PromptResultValue(res), nil
}

// The errors of these requests carry their failure code (Classify).

// Call calls tool with args, the arguments object as the model or the
// person wrote it (nil or null: {}), sent as it is, without decoding it. progress
// is the call's progress token (nil: none); the fields of WithCallMeta in
// ctx join it in the request's _meta. What the server asks during the call
// goes to the relay of WithRelay in ctx, if any (relay.go). The result is
// decoded once, by the adapter, from the message it arrived in (CallTool).
func (s *Session) Call(ctx context.Context, tool string, args json.RawMessage, progress any) (mcpvalue.CallResult, error) {
	if t := bytes.TrimSpace(args); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		// Servers validate arguments as an object; null is refused.
		args = json.RawMessage("{}")
	}
	req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args, Meta: callMeta(ctx, progress)}}
	// What the server asks until the answer is read is tied to this call
	// (relay.go).
	done := s.calls.enter(ctx)
	res, err := s.CallTool(ctx, req)
	done()
	if err != nil {
		return mcpvalue.CallResult{}, Classify(err)
	}
	return CallResultValue(res), nil
}

// SetLogLevel asks the server to send log messages of level ("debug",
// "info", ...) and above.
func (s *Session) SetLogLevel(ctx context.Context, level string) error {
	return Classify(s.Client.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevel(level)}}))
}

// Ping pings the server; on the 2026-07-28 revision, which has no ping,
// it asks server/discover, as cheap and stateless.
func (s *Session) Ping(ctx context.Context) error {
	if s.Stateless() {
		_, err := s.Client.Discover(ctx, mcp.DiscoverRequest{})
		return Classify(err)
	}
	return Classify(s.Client.Ping(ctx))
}

// Stateless reports whether the revision in use has no initialize and no
// ping (2026-07-28 and later).
func (s *Session) Stateless() bool { return mcp.IsModernProtocol(s.Protocol.Revision) }

// ServerInfo names the server as it introduced itself.
func (s *Session) ServerInfo() mcpvalue.Implementation {
	if s.Init == nil {
		return mcpvalue.Implementation{}
	}
	i := s.Init.ServerInfo
	return mcpvalue.Implementation{Name: i.Name, Title: i.Title, Version: i.Version}
}

// Instructions are the server's instructions ("" for none).
func (s *Session) Instructions() string {
	if s.Init == nil {
		return ""
	}
	return s.Init.Instructions
}

// Capabilities are the capabilities the server declared.
func (s *Session) Capabilities() mcpvalue.Capabilities {
	if s.Init == nil {
		return mcpvalue.Capabilities{}
	}
	return CapabilitiesValue(s.Init.Capabilities)
}

// CapabilitiesValue is a server's capabilities as hermes keeps them.
func CapabilitiesValue(c mcp.ServerCapabilities) mcpvalue.Capabilities {
	var v mcpvalue.Capabilities
	if c.Tools != nil {
		v.Tools = encodeValue(c.Tools)
	}
	if c.Resources != nil {
		v.Resources = encodeValue(c.Resources)
	}
	if c.Prompts != nil {
		v.Prompts = encodeValue(c.Prompts)
	}
	if c.Logging != nil {
		v.Logging = encodeValue(c.Logging)
	}
	if c.Completions != nil {
		v.Completions = encodeValue(c.Completions)
	}
	return v
}

// NotificationValue is a server notification as hermes keeps it.
func NotificationValue(n mcp.JSONRPCNotification) mcpvalue.Notification {
	return mcpvalue.Notification{Method: n.Method, Params: n.Params.AdditionalFields}
}

// Classify gives an error of mcp-go's client its failure code, once, where
// it leaves the engine: a request the server does not know (JSON-RPC
// -32601) is failure.CodeMethodNotFound; the rest is failure.FromClient's.
func Classify(err error) error {
	if err != nil && errors.Is(err, mcp.ErrMethodNotFound) {
		return failure.Wrap(failure.CodeMethodNotFound, err)
	}
	return failure.FromClient(err)
}

// Revision is the protocol revision in use: the negotiated one, else the
// one the server's initialize answer named.
func (s *Session) Revision() string {
	if s.Protocol.Revision == "" && s.Init != nil {
		return s.Init.ProtocolVersion
	}
	return s.Protocol.Revision
}

// ListPrompts lists every prompt of the server, following its cursors (a
// repeated cursor is an error).
func (s *Session) ListPrompts(ctx context.Context) ([]mcpvalue.Prompt, error) {
	res, err := s.Client.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		return nil, Classify(err)
	}
	return PromptValues(res.Prompts), nil
}
