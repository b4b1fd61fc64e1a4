package transportwire

import (
	"encoding/json"
	"net/http"
	"slices"
)

// The headers of a FrameHeaderMessage are JSON: an object of arrays of
// strings, as encoding/json writes an http.Header. A message of the
// 2026-07-28 revision carries a few (Mcp-Method, Mcp-Name, the version),
// and encoding/json's reflection was 4 % of the HTTP plugin's CPU per call
// to decode them. AppendHeader and ParseHeader write and read the same
// JSON directly when every name and value is plain printable ASCII, and
// leave anything else to encoding/json, so either side reads what the
// other writes, whichever way it was written.

// AppendHeader appends h as JSON to b.
func AppendHeader(b []byte, h http.Header) ([]byte, error) {
	if !plainHeader(h) {
		hb, err := json.Marshal(h)
		return append(b, hb...), err
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys) // as encoding/json orders a map's keys
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), k...), `":`...)
		vs := h[k]
		if vs == nil {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '[')
		for j, v := range vs {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(append(append(b, '"'), v...), '"')
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// plainHeader reports whether every name and value of h is printable ASCII
// that JSON writes as it is (no quote, backslash, or HTML character that
// encoding/json escapes).
func plainHeader(h http.Header) bool {
	for k, vs := range h {
		if !plain(k) {
			return false
		}
		for _, v := range vs {
			if !plain(v) {
				return false
			}
		}
	}
	return true
}

func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// ParseHeader reads headers written by AppendHeader (or by encoding/json).
func ParseHeader(b []byte) (http.Header, error) {
	if h, ok := parsePlain(b); ok {
		return h, nil
	}
	var h http.Header
	err := json.Unmarshal(b, &h)
	return h, err
}

// parsePlain parses the JSON AppendHeader writes for plain headers: no
// white space, no escapes. Anything else is not ok, for encoding/json.
func parsePlain(b []byte) (http.Header, bool) {
	p := plainParser{b: b}
	if !p.take('{') {
		return nil, false
	}
	h := http.Header{}
	if p.take('}') {
		return h, p.i == len(b)
	}
	for {
		k, ok := p.str()
		if !ok || !p.take(':') {
			return nil, false
		}
		if _, dup := h[k]; dup {
			return nil, false // encoding/json's rule for duplicates applies
		}
		if p.lit("null") {
			h[k] = nil
		} else {
			if !p.take('[') {
				return nil, false
			}
			vs := []string{}
			if !p.take(']') {
				for {
					v, ok := p.str()
					if !ok {
						return nil, false
					}
					vs = append(vs, v)
					if p.take(']') {
						break
					}
					if !p.take(',') {
						return nil, false
					}
				}
			}
			h[k] = vs
		}
		if p.take('}') {
			return h, p.i == len(b)
		}
		if !p.take(',') {
			return nil, false
		}
	}
}

type plainParser struct {
	b []byte
	i int
}

func (p *plainParser) take(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *plainParser) lit(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// str reads a string without escapes of plain characters.
func (p *plainParser) str() (string, bool) {
	if !p.take('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := string(p.b[start:p.i])
			p.i++
			return s, true
		}
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return "", false
		}
		p.i++
	}
	return "", false
}
