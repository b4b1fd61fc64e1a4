package toolview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// Error texts of tool results.
const (
	// msgToolError is the error of an isError result without text.
	msgToolError = "MCP tool returned an error"
	// msgNoResult is the error of a missing result.
	msgNoResult = "MCP tool returned no result"
)

// DefaultMaxResultBytes is the largest result RenderCallResult hands to the
// model as text: 512 KiB, a server's max_result_kb by default.
const DefaultMaxResultBytes = 512 << 10

// RenderCallResult renders a tools/call result of server as the JSON string
// the model receives, with the default result limit (DefaultMaxResultBytes);
// see RenderCallResultMax.
func RenderCallResult(server string, res *mcp.CallToolResult, cache *MediaCache) string {
	return RenderCallResultMax(server, res, cache, DefaultMaxResultBytes)
}

// RenderCallResultMax renders a tools/call result of server as the JSON
// string the model receives. maxResult is the server's max_result_kb in
// bytes (0 or less: DefaultMaxResultBytes).
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
//
// Text (or structured content, or an error's text) over maxResult is more
// than a model can read: it is saved to a file by cache (up to 50 MiB) and
// the model gets a note naming the file, the limit and how to raise it,
// followed by the text's beginning.
func RenderCallResultMax(server string, res *mcp.CallToolResult, cache *MediaCache, maxResult int) string {
	if maxResult <= 0 {
		maxResult = DefaultMaxResultBytes
	}
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
		if len(msg) > maxResult {
			return ErrorResult(oversized(server, "error text", Redact(msg), "text/plain", cache, maxResult))
		}
		return ErrorResult(msg)
	}
	text := renderBlocks(server, res.Content, cache)
	if len(text) > maxResult {
		text = oversized(server, "result", text, "text/plain", cache, maxResult)
	}
	structured := structuredContent(res)
	if structured != nil {
		raw, ok := structured.(json.RawMessage)
		if !ok {
			raw, _ = json.Marshal(structured)
		}
		if len(raw) > maxResult {
			note := oversized(server, "structured content", string(raw), "application/json", cache, maxResult)
			structured = nil
			if text != "" {
				text += "\n"
			}
			text += note
		}
	}
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

// previewBytes is how much of an oversized result the model still sees.
const previewBytes = 2 << 10

// oversized saves text, a part of a result of server over maxResult bytes,
// and returns what the model gets instead: where the whole is, why, and its
// beginning.
func oversized(server, what, text, mimeType string, cache *MediaCache, maxResult int) string {
	limit := fmt.Sprintf("max_result_kb is %d for server '%s'; raise it in config.yaml to receive more inline", maxResult>>10, clean(server))
	head := preview(text, min(previewBytes, maxResult/2))
	p, saved, err := cache.saveText(text, mimeType)
	var note string
	switch {
	case err != nil:
		note = fmt.Sprintf("[MCP %s too large for the model (%d bytes; %s) and it could not be saved: %s. It begins:]", what, len(text), limit, clean(err.Error()))
	case saved < len(text):
		note = fmt.Sprintf("[MCP %s too large for the model (%d bytes; %s): its first %d bytes are saved to %s (%s) — read it with read_file or terminal tools. It begins:]", what, len(text), limit, saved, p, mimeType)
	default:
		note = fmt.Sprintf("[MCP %s too large for the model (%d bytes; %s): saved to %s (%s) — read it with read_file or terminal tools. It begins:]", what, len(text), limit, p, mimeType)
	}
	return note + "\n" + head
}

// preview returns at most n bytes of the start of s, cut at a rune
// boundary.
func preview(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
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
