package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// object is a JSON object read field by field, so that each known field
// is checked on its own and unknown ones are left alone.
type object map[string]json.RawMessage

func parseObject(data []byte, what string) (object, error) {
	if len(data) > MaxDocumentSize {
		return nil, fmt.Errorf("discovery: %s is larger than the %d-byte limit (MaxDocumentSize): %w", what, MaxDocumentSize, ErrTooLarge)
	}
	var o object
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("discovery: %s is not a JSON object: %w", what, err)
	}
	if o == nil {
		return nil, fmt.Errorf("discovery: %s is not a JSON object: null", what)
	}
	return o, nil
}

func (o object) has(name string) bool {
	v, ok := o[name]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// str returns a string field, "" when absent or null.
func (o object) str(name string) (string, error) {
	if !o.has(name) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(o[name], &s); err != nil {
		return "", fmt.Errorf("field %s is not a string", name)
	}
	if len(s) > maxString {
		return "", fmt.Errorf("field %s is longer than %d bytes", name, maxString)
	}
	return s, nil
}

// strs returns an array-of-strings field, nil when absent or null.
func (o object) strs(name string) ([]string, error) {
	if !o.has(name) {
		return nil, nil
	}
	var l []string
	if err := json.Unmarshal(o[name], &l); err != nil {
		return nil, fmt.Errorf("field %s is not an array of strings", name)
	}
	if len(l) > maxList {
		return nil, fmt.Errorf("field %s has more than %d entries", name, maxList)
	}
	for _, s := range l {
		if len(s) > maxString {
			return nil, fmt.Errorf("field %s has an entry longer than %d bytes", name, maxString)
		}
	}
	return l, nil
}

// boolean returns a boolean field; only a literal true counts as true.
func (o object) boolean(name string) bool {
	var b bool
	return o.has(name) && json.Unmarshal(o[name], &b) == nil && b
}

// integer returns an integer field, 0 when absent, null or not an integer.
func (o object) integer(name string) int64 {
	var n int64
	if o.has(name) && json.Unmarshal(o[name], &n) == nil {
		return n
	}
	return 0
}

// httpURLField returns a field that must, when present, be an http(s) URL
// without a fragment.
func (o object) httpURLField(name string) (string, error) {
	s, err := o.str(name)
	if err != nil || s == "" {
		return s, err
	}
	u, err := parseHTTPURL(s)
	if err != nil {
		return "", fmt.Errorf("field %s: %w", name, err)
	}
	if strings.ContainsRune(s, '#') || u.Fragment != "" {
		return "", fmt.Errorf("field %s: %s has a fragment", name, quote(s))
	}
	return s, nil
}

// validScopeToken reports an RFC 6749 §3.3 scope-token.
func validScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
