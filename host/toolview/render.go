package toolview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Error texts of tool results.
const (
	// msgToolError is the error of an isError result without text.
	msgToolError = "MCP tool returned an error"
	// msgNoResult is the error of a missing result.
	msgNoResult = "MCP tool returned no result"
)

// RenderCallResult renders a tools/call result of server as the JSON string
// the model receives.
//
// An isError result becomes {"error": text}, its text parts joined by
// newlines (or "MCP tool returned an error"), with secrets redacted. A
// successful result's content blocks are rendered in order and joined by
// newlines: text as is; images and audio saved by cache and shown as
// "MEDIA:<path>"; resource links described with a pointer to the server's
// read_resource tool; embedded text resources inlined; embedded blobs saved
// (up to 50 MiB decoded, maxMediaBytes) and described. The output is
// {"result": text}, or with structuredContent {"result": text,
// "structuredContent": obj}, or {"result": obj} when there is no text.
func RenderCallResult(server string, res *mcp.CallToolResult, cache *MediaCache) string {
	if res == nil {
		return ErrorResult(msgNoResult)
	}
	if res.IsError {
		var parts []string
		for _, c := range res.Content {
			if t, ok := contentText(c); ok && t != "" {
				parts = append(parts, t)
			}
		}
		msg := strings.Join(parts, "\n")
		if msg == "" {
			msg = msgToolError
		}
		return ErrorResult(msg)
	}
	text := renderBlocks(server, res.Content, cache)
	structured := structuredContent(res)
	switch {
	case structured == nil:
		return marshalJSON(struct {
			Result string `json:"result"`
		}{text})
	case text == "":
		return marshalJSON(struct {
			Result any `json:"result"`
		}{structured})
	default:
		return marshalJSON(struct {
			Result            string `json:"result"`
			StructuredContent any    `json:"structuredContent"`
		}{text, structured})
	}
}

// ErrorResult renders msg as {"error": msg} with secrets redacted.
func ErrorResult(msg string) string {
	return marshalJSON(struct {
		Error string `json:"error"`
	}{Redact(msg)})
}

// structuredContent returns the result's structured content, preferring the
// raw bytes received, or nil when there is none.
func structuredContent(res *mcp.CallToolResult) any {
	if raw := bytes.TrimSpace(res.RawStructuredContent); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) && json.Valid(raw) {
		return json.RawMessage(raw)
	}
	return res.StructuredContent
}

// contentText returns the text of a text block or of an embedded text
// resource.
func contentText(c mcp.Content) (string, bool) {
	switch v := c.(type) {
	case mcp.TextContent:
		return v.Text, true
	case *mcp.TextContent:
		if v != nil {
			return v.Text, true
		}
	case mcp.EmbeddedResource:
		return resourceText(v.Resource)
	case *mcp.EmbeddedResource:
		if v != nil {
			return resourceText(v.Resource)
		}
	}
	return "", false
}

func resourceText(rc mcp.ResourceContents) (string, bool) {
	switch r := rc.(type) {
	case mcp.TextResourceContents:
		return r.Text, true
	case *mcp.TextResourceContents:
		if r != nil {
			return r.Text, true
		}
	}
	return "", false
}

// renderBlocks renders content blocks in order, skipping empty ones, joined
// by newlines.
func renderBlocks(server string, blocks []mcp.Content, cache *MediaCache) string {
	parts := make([]string, 0, len(blocks))
	for _, c := range blocks {
		if s := renderBlock(server, c, cache); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// renderBlock renders one content block as text.
func renderBlock(server string, c mcp.Content, cache *MediaCache) string {
	switch v := c.(type) {
	case mcp.TextContent:
		return v.Text
	case *mcp.TextContent:
		if v != nil {
			return v.Text
		}
	case mcp.ImageContent:
		return renderMedia("image", v.Data, v.MIMEType, cache)
	case *mcp.ImageContent:
		if v != nil {
			return renderMedia("image", v.Data, v.MIMEType, cache)
		}
	case mcp.AudioContent:
		return renderMedia("audio", v.Data, v.MIMEType, cache)
	case *mcp.AudioContent:
		if v != nil {
			return renderMedia("audio", v.Data, v.MIMEType, cache)
		}
	case mcp.ResourceLink:
		return renderResourceLink(server, v)
	case *mcp.ResourceLink:
		if v != nil {
			return renderResourceLink(server, *v)
		}
	case mcp.EmbeddedResource:
		return renderEmbedded(v.Resource, cache)
	case *mcp.EmbeddedResource:
		if v != nil {
			return renderEmbedded(v.Resource, cache)
		}
	case nil:
		return ""
	default:
		return fmt.Sprintf("[MCP content of unsupported type %T omitted]", c)
	}
	return ""
}

// renderMedia saves base64 image or audio data and returns "MEDIA:<path>",
// or a bracketed note saying why it could not be saved.
func renderMedia(kind, data, mimeType string, cache *MediaCache) string {
	mt := clean(mimeType)
	if len(data) > maxBase64Len() {
		return fmt.Sprintf("[MCP %s too large to cache: ~%d bytes]", kind, len(data)*3/4)
	}
	raw, err := decodeBase64(data)
	if err != nil {
		return fmt.Sprintf("[MCP %s could not be decoded: %s]", kind, orUnknown(mt))
	}
	if cache == nil {
		return fmt.Sprintf("[MCP %s received (%d bytes, %s) but media cache unavailable]", kind, len(raw), orUnknown(mt))
	}
	p, err := cache.save(raw, mimeType, "")
	if errors.Is(err, errTooLarge) {
		return fmt.Sprintf("[MCP %s too large to cache: %d bytes]", kind, len(raw))
	}
	if err != nil {
		return fmt.Sprintf("[MCP %s could not be cached: %s]", kind, orUnknown(mt))
	}
	return "MEDIA:" + p
}

// renderResourceLink describes a resource link and how to read it.
func renderResourceLink(server string, l mcp.ResourceLink) string {
	if l.URI == "" {
		return ""
	}
	details := "uri=" + clean(l.URI)
	if l.Name != "" {
		details += ", name=" + clean(l.Name)
	}
	if l.MIMEType != "" {
		details += ", mimeType=" + clean(l.MIMEType)
	}
	return fmt.Sprintf("[MCP resource link: %s — fetch it with %s]", details, ToolName(server, UtilityReadResource))
}

// renderEmbedded inlines an embedded text resource or saves a blob.
func renderEmbedded(rc mcp.ResourceContents, cache *MediaCache) string {
	if t, ok := resourceText(rc); ok {
		return t
	}
	switch r := rc.(type) {
	case mcp.BlobResourceContents:
		return renderBlob(r, cache, "")
	case *mcp.BlobResourceContents:
		if r != nil {
			return renderBlob(*r, cache, "")
		}
	}
	return ""
}

// renderBlob saves a blob resource and describes where it went. noCache is
// the text used when cache is nil; "" selects the default note.
func renderBlob(b mcp.BlobResourceContents, cache *MediaCache, noCache string) string {
	uri, mt := clean(b.URI), clean(b.MIMEType)
	if b.Blob == "" {
		return ""
	}
	if len(b.Blob) > maxBase64Len() {
		return fmt.Sprintf("[MCP embedded resource too large to cache: ~%d bytes, uri=%s]", len(b.Blob)*3/4, uri)
	}
	raw, err := decodeBase64(b.Blob)
	if err != nil {
		return fmt.Sprintf("[MCP embedded resource could not be decoded: %s]", firstNonEmpty(mt, uri))
	}
	if len(raw) > mediaCap {
		return fmt.Sprintf("[MCP embedded resource too large to cache: %d bytes, uri=%s]", len(raw), uri)
	}
	if cache == nil {
		if noCache != "" {
			return fmt.Sprintf(noCache, len(raw))
		}
		return fmt.Sprintf("[MCP embedded resource received (%d bytes, %s) but document cache unavailable]", len(raw), orUnknown(mt))
	}
	p, err := cache.save(raw, b.MIMEType, b.URI)
	if err != nil {
		return fmt.Sprintf("[MCP embedded resource could not be cached: %s]", firstNonEmpty(mt, uri))
	}
	return fmt.Sprintf("[MCP resource saved to %s (%s, %d bytes) — read it with read_file or terminal tools]", p, orUnknown(mt), len(raw))
}

// clean removes control characters (newlines, escapes) from a server-given
// string shown inside a bracketed note, so it cannot break the note's line.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}

func orUnknown(mimeType string) string {
	return firstNonEmpty(mimeType, "unknown type")
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// marshalJSON encodes v without HTML escaping, as a string without a
// trailing newline. v is always one of this package's result shapes; if it
// still cannot be encoded (a structuredContent value JSON cannot express),
// an error result saying so is returned instead.
func marshalJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		msg := fmt.Sprintf("render MCP result: %v", err)
		_ = enc.Encode(struct {
			Error string `json:"error"`
		}{Redact(msg)})
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
