package toolview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/hermes-agent/hermes/host/mcpvalue"
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
func RenderCallResult(server string, res *mcpvalue.CallResult, cache *MediaCache) string {
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
func RenderCallResultMax(server string, res *mcpvalue.CallResult, cache *MediaCache, maxResult int) string {
	return renderCall(server, res, cache, maxResult).model()
}

// RenderCallResultPerson renders a tools/call result of server as text
// for a person: the result's text (or "error: " and its error), then any
// structured content as indented JSON, which is shown alone when the text
// is that same JSON (as the specification asks servers to send it). Media
// and oversized parts are saved as for the model (RenderCallResultMax) and
// named the same way.
func RenderCallResultPerson(server string, res *mcpvalue.CallResult, cache *MediaCache, maxResult int) string {
	return renderCall(server, res, cache, maxResult).person()
}

// rendered is a result rendered once, before it is written for the model
// or for a person.
type rendered struct {
	// failed: an error result, whose message is errText (redacted).
	failed  bool
	errText string
	// text is the result's text; structured its structured content
	// (nil: none), as JSON.
	text       string
	structured json.RawMessage
}

// renderCall renders res: its blocks in order, media saved, oversized
// parts saved and noted (see RenderCallResultMax).
func renderCall(server string, res *mcpvalue.CallResult, cache *MediaCache, maxResult int) rendered {
	if maxResult <= 0 {
		maxResult = DefaultMaxResultBytes
	}
	if res == nil {
		return rendered{failed: true, errText: Redact(msgNoResult)}
	}
	if res.IsError {
		var parts []string
		for i := range res.Content {
			if t, ok := res.Content[i].TextOf(); ok && t != "" {
				parts = append(parts, t)
			}
		}
		msg := strings.Join(parts, "\n")
		if msg == "" {
			msg = msgToolError
		}
		if len(msg) > maxResult {
			msg = oversized(server, "error text", Redact(msg), "text/plain", cache, maxResult)
		}
		return rendered{failed: true, errText: Redact(msg)}
	}
	text := renderBlocks(server, res.Content, cache)
	if len(text) > maxResult {
		text = oversized(server, "result", text, "text/plain", cache, maxResult)
	}
	var structured json.RawMessage
	if res.HasStructured() && json.Valid(res.Structured) {
		structured = res.Structured
		if len(structured) > maxResult {
			note := oversized(server, "structured content", string(structured), "application/json", cache, maxResult)
			structured = nil
			if text != "" {
				text += "\n"
			}
			text += note
		}
	}
	return rendered{text: text, structured: structured}
}

// model writes r as the JSON string the model receives.
func (r rendered) model() string {
	switch {
	case r.failed:
		return errorJSON(r.errText)
	case r.structured == nil:
		return marshalJSON(struct {
			Result string `json:"result"`
		}{r.text})
	case r.text == "":
		return marshalJSON(struct {
			Result json.RawMessage `json:"result"`
		}{r.structured})
	default:
		return marshalJSON(struct {
			Result            string          `json:"result"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		}{r.text, r.structured})
	}
}

// person writes r as text for a person (RenderCallResultPerson).
func (r rendered) person() string {
	if r.failed {
		return "error: " + validText(r.errText)
	}
	var parts []string
	switch {
	case r.structured == nil:
		parts = append(parts, validText(r.text))
	case r.text == "":
	case !sameJSON([]byte(r.text), r.structured):
		parts = append(parts, validText(r.text))
	}
	if r.structured != nil {
		parts = append(parts, indentJSON(r.structured))
	}
	return strings.Join(parts, "\n")
}

// validText is s as it reads back from the JSON the model gets: each byte
// of an invalid UTF-8 sequence replaced by U+FFFD.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// sameJSON reports whether a and b are JSON documents of equal value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// indentJSON is raw indented by two spaces, or raw as it is when it is
// not JSON.
func indentJSON(raw json.RawMessage) string {
	var compact, buf bytes.Buffer
	if json.Compact(&compact, raw) != nil || json.Indent(&buf, compact.Bytes(), "", "  ") != nil {
		return string(raw)
	}
	return buf.String()
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
func ErrorResult(msg string) string { return errorJSON(Redact(msg)) }

// errorJSON is {"error": msg}, msg already redacted.
func errorJSON(msg string) string {
	return marshalJSON(struct {
		Error string `json:"error"`
	}{msg})
}

// renderBlocks renders content blocks in order, skipping empty ones, joined
// by newlines.
func renderBlocks(server string, blocks []mcpvalue.Content, cache *MediaCache) string {
	parts := make([]string, 0, len(blocks))
	for i := range blocks {
		if s := renderBlock(server, &blocks[i], cache); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// renderBlock renders one content block as text.
func renderBlock(server string, c *mcpvalue.Content, cache *MediaCache) string {
	switch c.Type {
	case mcpvalue.TypeText:
		return c.Text
	case mcpvalue.TypeImage:
		return renderMedia("image", c.Data, c.MIMEType, cache)
	case mcpvalue.TypeAudio:
		return renderMedia("audio", c.Data, c.MIMEType, cache)
	case mcpvalue.TypeResourceLink:
		return renderResourceLink(server, c)
	case mcpvalue.TypeResource:
		return renderEmbedded(c.Resource, cache)
	}
	if c.Unknown != "" {
		return fmt.Sprintf("[MCP content of unsupported type %s omitted]", c.Unknown)
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
func renderResourceLink(server string, l *mcpvalue.Content) string {
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
func renderEmbedded(rc *mcpvalue.ResourceContents, cache *MediaCache) string {
	switch {
	case rc == nil:
		return ""
	case !rc.IsBlob:
		return rc.Text
	}
	return renderBlob(rc, cache, "")
}

// renderBlob saves a blob resource and describes where it went. noCache is
// the text used when cache is nil; "" selects the default note.
func renderBlob(b *mcpvalue.ResourceContents, cache *MediaCache, noCache string) string {
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

// Reply is a tool call's answer as the model and a person get it.
type Reply struct {
	// Text is the JSON text the model receives.
	Text string
	// Failed: the call failed: the result's own isError flag, or a call
	// that produced no result.
	Failed bool
	// Error is, when Failed, the failure as a person reads it (redacted).
	Error string
}

// ReplyOf renders a tools/call result of server once (RenderCallResultMax)
// into the reply the model gets; Failed is the result's IsError.
func ReplyOf(server string, res *mcpvalue.CallResult, cache *MediaCache, maxResult int) Reply {
	r := renderCall(server, res, cache, maxResult)
	return Reply{Text: r.model(), Failed: r.failed, Error: r.errText}
}

// Failure is the reply of a call that produced no result: msg, redacted,
// as {"error": msg} for the model (ErrorResult) and as it is for a person.
func Failure(msg string) Reply {
	red := Redact(msg)
	return Reply{Text: errorJSON(red), Failed: true, Error: red}
}
