package statedb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// ContentJSONPrefix marks structured message content stored as JSON (the
// agent's hermes_state._CONTENT_JSON_PREFIX): the prefix, then the JSON
// text of a list of typed parts ({"type":"text","text":...},
// {"type":"image_url","image_url":{"url":...}}, ...).
const ContentJSONPrefix = "\x00json:"

// MaxContentBytes bounds the content of one message as the readers return
// it: longer content is cut to this many bytes (in SQLite, so one huge row
// never reaches memory whole; a cut multipart value reads as text).
const MaxContentBytes = 1 << 20

// EncodeText returns plain text content as stored: the text itself.
func EncodeText(text string) string { return text }

// EncodeParts returns multipart content as stored: ContentJSONPrefix and
// the JSON list of parts. Each part should be an object with a string
// "type"; text parts are {"type":"text","text":...}.
func EncodeParts(parts []any) (string, error) {
	if parts == nil {
		parts = []any{}
	}
	data, err := json.Marshal(parts)
	if err != nil {
		return "", fmt.Errorf("encode message content of %d parts: %w", len(parts), err)
	}
	return ContentJSONPrefix + string(data), nil
}

// TextPart is a text part of multipart content.
func TextPart(text string) map[string]any { return map[string]any{"type": "text", "text": text} }

// DecodeContent turns a stored content value (a scanned column: string,
// []byte, nil, a number) into its text and its non-text parts. Structured
// content is recognised by ContentJSONPrefix, and, for older writers, as
// bare JSON text that is a non-empty list of typed parts
// ([{"type": ...}, ...]). Anything else is plain text. The text of
// multipart content is its text parts' text joined by "\n"; the other
// parts are returned as stored, in order. It never fails: what does not
// decode is text.
func DecodeContent(v any) (text string, parts []json.RawMessage) {
	s := sqlString(v)
	if rest, ok := strings.CutPrefix(s, ContentJSONPrefix); ok {
		if text, parts, ok := decodeParts([]byte(rest), false); ok {
			return text, parts
		}
		return s, nil
	}
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") {
		if text, parts, ok := decodeParts([]byte(t), true); ok {
			return text, parts
		}
	}
	return s, nil
}

// decodeParts decodes multipart content. A JSON string is plain text; a
// list keeps its text parts' text joined by "\n" and returns the other
// parts; an object is a one-part list. strict accepts only a non-empty
// list of objects that each have a string "type".
func decodeParts(data []byte, strict bool) (string, []json.RawMessage, bool) {
	var list []json.RawMessage
	if err := json.Unmarshal(data, &list); err != nil {
		if strict {
			return "", nil, false
		}
		var str string
		if json.Unmarshal(data, &str) == nil {
			return str, nil, true
		}
		if _, ok := JSONObject(data); !ok {
			return "", nil, false
		}
		list = []json.RawMessage{data}
	}
	if strict {
		if len(list) == 0 {
			return "", nil, false
		}
		for _, raw := range list {
			part, ok := JSONObject(raw)
			if !ok {
				return "", nil, false
			}
			if t := bytes.TrimSpace(part["type"]); len(t) == 0 || t[0] != '"' {
				return "", nil, false
			}
		}
	}
	var texts []string
	var parts []json.RawMessage
	for _, raw := range list {
		part, ok := JSONObject(raw)
		if !ok {
			continue // neither text nor an attachment
		}
		if JSONString(part["type"]) == "text" {
			texts = append(texts, JSONString(part["text"]))
			continue
		}
		parts = append(parts, raw)
	}
	return strings.Join(texts, "\n"), parts, true
}

// PartType returns the "type" of a stored part ("" when it has none).
func PartType(raw json.RawMessage) string {
	m, ok := JSONObject(raw)
	if !ok {
		return ""
	}
	return JSONString(m["type"])
}
