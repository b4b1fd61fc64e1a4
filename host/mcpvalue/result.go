package mcpvalue

import "encoding/json"

// The kinds of content block (Content.Type).
const (
	TypeText         = "text"
	TypeImage        = "image"
	TypeAudio        = "audio"
	TypeResourceLink = "resource_link"
	TypeResource     = "resource"
)

// CallResult is a tools/call result: one value, rendered for the model or
// for a person on demand (host/toolview), with the tool's own error flag.
type CallResult struct {
	// Content are the result's content blocks, in the server's order.
	Content []Content
	// Structured is the structuredContent as the server wrote it (nil:
	// none).
	Structured json.RawMessage
	// IsError is the result's isError: the tool ran and says it failed.
	IsError bool
	// Meta is the result's _meta as the server wrote it (nil: none).
	Meta json.RawMessage
}

// HasStructured reports whether the result carries structured content.
func (r *CallResult) HasStructured() bool { return HasSchema(r.Structured) }

// MarshalJSON encodes the result as MCP writes it: content, then
// structuredContent and isError when set (keys sorted).
func (r CallResult) MarshalJSON() ([]byte, error) {
	content := r.Content
	if content == nil {
		content = []Content{}
	}
	w := struct {
		Meta       json.RawMessage `json:"_meta,omitempty"`
		Content    []Content       `json:"content"`
		IsError    bool            `json:"isError,omitempty"`
		Structured json.RawMessage `json:"structuredContent,omitempty"`
	}{r.Meta, content, r.IsError, nil}
	if r.HasStructured() {
		w.Structured = r.Structured
	}
	return json.Marshal(w)
}

// Content is one content block of a result or a prompt message. Type says
// which fields are set: text (Text), image and audio (Data, base64, and
// MIMEType), resource_link (URI, Name, Title, Description, MIMEType,
// Size) and resource (Resource). A block of a kind hermes does not know
// keeps its Type and Unknown, the name of what the engine decoded.
type Content struct {
	Type string
	// Text is a text block's text.
	Text string
	// Data is an image's or audio's base64 data; MIMEType its type (or a
	// resource link's).
	Data, MIMEType string
	// URI, Name, Title, Description and Size describe a resource link.
	URI, Name, Title, Description string
	Size                          *int64
	// Resource is an embedded resource.
	Resource *ResourceContents
	// Annotations and Meta are the block's annotations and _meta as the
	// server wrote them (nil: none).
	Annotations, Meta json.RawMessage
	// Unknown names a block hermes does not render (its engine's type).
	Unknown string
}

// Text returns a text block.
func Text(s string) Content { return Content{Type: TypeText, Text: s} }

// TextOf returns the text of a text block or of an embedded text resource.
func (c *Content) TextOf() (string, bool) {
	switch c.Type {
	case TypeText:
		return c.Text, true
	case TypeResource:
		if c.Resource != nil && !c.Resource.IsBlob {
			return c.Resource.Text, true
		}
	}
	return "", false
}

// MarshalJSON encodes the block as MCP writes it, its fields in the order
// of the specification's schema.
func (c Content) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case TypeText:
		return json.Marshal(struct {
			Annotations json.RawMessage `json:"annotations,omitempty"`
			Meta        json.RawMessage `json:"_meta,omitempty"`
			Type        string          `json:"type"`
			Text        string          `json:"text"`
		}{c.Annotations, c.Meta, c.Type, c.Text})
	case TypeImage, TypeAudio:
		return json.Marshal(struct {
			Annotations json.RawMessage `json:"annotations,omitempty"`
			Meta        json.RawMessage `json:"_meta,omitempty"`
			Type        string          `json:"type"`
			Data        string          `json:"data"`
			MIMEType    string          `json:"mimeType"`
		}{c.Annotations, c.Meta, c.Type, c.Data, c.MIMEType})
	case TypeResourceLink:
		return json.Marshal(struct {
			Annotations json.RawMessage `json:"annotations,omitempty"`
			Meta        json.RawMessage `json:"_meta,omitempty"`
			Type        string          `json:"type"`
			URI         string          `json:"uri"`
			Name        string          `json:"name"`
			Title       string          `json:"title,omitempty"`
			Description string          `json:"description"`
			MIMEType    string          `json:"mimeType"`
			Size        *int64          `json:"size,omitempty"`
		}{c.Annotations, c.Meta, c.Type, c.URI, c.Name, c.Title, c.Description, c.MIMEType, c.Size})
	case TypeResource:
		return json.Marshal(struct {
			Annotations json.RawMessage   `json:"annotations,omitempty"`
			Meta        json.RawMessage   `json:"_meta,omitempty"`
			Type        string            `json:"type"`
			Resource    *ResourceContents `json:"resource"`
		}{c.Annotations, c.Meta, c.Type, c.Resource})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
	}{c.Type})
}

// ResourceContents are the contents of one resource: text, or a base64
// blob (IsBlob).
type ResourceContents struct {
	URI      string
	MIMEType string
	// Text is a text resource's text; Blob a blob's base64 data.
	Text, Blob string
	IsBlob     bool
	// Meta is the contents' _meta as the server wrote it (nil: none).
	Meta json.RawMessage
}

// MarshalJSON encodes the contents as MCP writes them.
func (r ResourceContents) MarshalJSON() ([]byte, error) {
	if r.IsBlob {
		return json.Marshal(struct {
			Meta     json.RawMessage `json:"_meta,omitempty"`
			URI      string          `json:"uri"`
			MIMEType string          `json:"mimeType,omitempty"`
			Blob     string          `json:"blob"`
		}{r.Meta, r.URI, r.MIMEType, r.Blob})
	}
	return json.Marshal(struct {
		Meta     json.RawMessage `json:"_meta,omitempty"`
		URI      string          `json:"uri"`
		MIMEType string          `json:"mimeType,omitempty"`
		Text     string          `json:"text"`
	}{r.Meta, r.URI, r.MIMEType, r.Text})
}
