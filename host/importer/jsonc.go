package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// stripJSONC turns JSON with comments (// and /* */) and trailing commas,
// as VS Code, Cursor and Gemini CLI accept in their files, into plain
// JSON. Text inside strings is left alone; an unterminated block comment
// runs to the end.
func stripJSONC(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inStr, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			out = append(out, c)
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if i < len(b) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			i += 2
			for i < len(b) && !(b[i] == '*' && i+1 < len(b) && b[i+1] == '/') {
				if b[i] == '\n' {
					out = append(out, '\n')
				}
				i++
			}
			i++ // the '/'
			out = append(out, ' ')
		case c == ']' || c == '}':
			// Drop a trailing comma before the closing bracket.
			j := len(out) - 1
			for j >= 0 && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
				j--
			}
			if j >= 0 && out[j] == ',' {
				out = append(out[:j], out[j+1:]...)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

// object is a JSON object with its keys in file order.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

// get returns the raw value of key.
func (o *object) get(key string) (json.RawMessage, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[key]
	return v, ok
}

// parseObject decodes one JSON object keeping the order of its keys (the
// last of duplicate keys wins, at the place of the first). Anything but an
// object is an error.
func parseObject(data []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(err, data)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", kindOfToken(tok))
	}
	o := &object{vals: map[string]json.RawMessage{}}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, jsonError(err, data)
		}
		k, _ := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, jsonError(err, data)
		}
		if _, dup := o.vals[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.vals[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonError(err, data)
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("unexpected text after the JSON object")
	}
	return o, nil
}

// topObject decodes data (JSON with comments allowed) as an object of raw
// values.
func topObject(data []byte) (map[string]json.RawMessage, error) {
	o, err := parseObject(stripJSONC(data))
	if err != nil {
		return nil, err
	}
	return o.vals, nil
}

// SyntaxError is a file that is not valid JSON (with comments), with the
// line and column where reading stopped (0 when not known).
type SyntaxError struct {
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("invalid JSON at line %d, column %d: %s", e.Line, e.Column, e.Msg)
	}
	return "invalid JSON: " + e.Msg
}

// jsonError describes a decoding error of data. stripJSONC keeps every
// line break, so a line is the line of the file as written.
func jsonError(err error, data []byte) error {
	e := &SyntaxError{Msg: err.Error()}
	off := int64(-1)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		off, e.Msg = int64(len(data)), "the text ends before the JSON does"
	}
	if off >= 0 && off <= int64(len(data)) {
		before := data[:off]
		e.Line = bytes.Count(before, []byte{'\n'}) + 1
		e.Column = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	}
	return e
}

func kindOfToken(tok any) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "a list"
		}
		return string(t)
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "something else"
}

// kindOf names the JSON type of raw, for messages.
func kindOf(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// usesGeminiKeys reports whether any server of an mcpServers object uses a
// key only Gemini CLI writes.
func usesGeminiKeys(raw json.RawMessage) bool {
	servers, err := parseObject(raw)
	if err != nil {
		return false
	}
	for _, k := range servers.keys {
		s, err := parseObject(servers.vals[k])
		if err != nil {
			continue
		}
		for _, key := range []string{"httpUrl", "trust", "includeTools", "excludeTools", "authProviderType"} {
			if _, ok := s.vals[key]; ok {
				return true
			}
		}
	}
	return false
}
