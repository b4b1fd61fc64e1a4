// Package fields is the host's one field decoder: it reads typed values
// out of a decoded YAML or JSON document (map[string]any, []any and
// scalars, as goccy/go-yaml and encoding/json produce them; JSON numbers
// may be json.Number), for config entries, catalog manifests and the
// client config files hermes imports. Each reader checks the value's type and
// fails with an *Error that names the file, the key and the type it
// wanted; none of them puts a value that may be secret into a message
// (Got says what kind of value was there, text only quoted where the
// caller allows it).
package fields

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Error is a value of the wrong type: File (when known) and Key (a dotted
// path, e.g. "tools.include" or "args[2]") say where, Want what the reader
// wanted and Got what it found.
type Error struct {
	File string
	Key  string
	Want string
	Got  string
}

// Error is one line: `FILE: key "KEY": want WANT, got GOT`.
func (e *Error) Error() string {
	msg := fmt.Sprintf("key %q: want %s, got %s", e.Key, e.Want, e.Got)
	if e.File != "" {
		return e.File + ": " + msg
	}
	return msg
}

// In returns e with its file set (nil stays nil), for a caller that knows
// which file the document came from.
func (e *Error) In(file string) *Error {
	if e == nil {
		return nil
	}
	c := *e
	c.File = file
	return &c
}

// Kind names the kind of v for a message: "nothing", "text", "true or
// false", "a number", "a list", "a mapping".
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "text"
	case bool:
		return "true or false"
	case int, int64, uint64, uint, float64, float32, json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return "a value of another kind"
}

// Show is v for a message: quoted when text, its number or truth value,
// else its kind.
func Show(v any) string {
	switch t := v.(type) {
	case string:
		return strconv.Quote(t)
	case bool, int, int64, uint64, uint:
		return fmt.Sprint(t)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	}
	return Kind(v)
}

func fail(key, want string, v any) *Error { return &Error{Key: key, Want: want, Got: Kind(v)} }

// Text reads a single value as text: a string as it is, a number or a
// truth value as written (YAML's `port: 8080` is the text "8080");
// nothing is "". Lists, mappings and NaN or infinite numbers fail.
func Text(key string, v any) (string, *Error) {
	switch t := v.(type) {
	case nil:
		return "", nil
	case string:
		return t, nil
	case json.Number:
		return string(t), nil
	case bool, int, int64, uint64, uint:
		return fmt.Sprint(t), nil
	case float32:
		return Text(key, float64(t))
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return "", &Error{Key: key, Want: "text", Got: Show(v)}
		}
		return strconv.FormatFloat(t, 'f', -1, 64), nil
	}
	return "", fail(key, "text", v)
}

// TextList reads a list of single values as text (nothing: nil). An entry
// that is a list, a mapping or nothing fails, naming its index.
func TextList(key string, v any) ([]string, *Error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]string, 0, len(t))
		for i, x := range t {
			item := fmt.Sprintf("%s[%d]", key, i)
			if x == nil {
				return nil, &Error{Key: item, Want: "text", Got: "nothing"}
			}
			s, err := Text(item, x)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fail(key, "a list", v)
}

// Mapping reads a mapping (nothing: nil).
func Mapping(key string, v any) (map[string]any, *Error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return t, nil
	}
	return nil, fail(key, "a mapping", v)
}

// TextMap reads a mapping of names to single values as text (nothing:
// nil). A value that is a list or a mapping fails, naming its key.
func TextMap(key string, v any) (map[string]string, *Error) {
	m, err := Mapping(key, v)
	if err != nil || m == nil {
		return nil, err
	}
	out := make(map[string]string, len(m))
	for _, k := range Keys(m) {
		s, err := Text(key+"."+k, m[k])
		if err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

// Bool reads true or false; nothing is def.
func Bool(key string, v any, def bool) (bool, *Error) {
	switch t := v.(type) {
	case nil:
		return def, nil
	case bool:
		return t, nil
	}
	return def, &Error{Key: key, Want: "true or false", Got: Show(v)}
}

// Seconds reads a length of time: a number of seconds (as Number reads
// it: 30, "2.5") or a Go duration string ("30s", "2m", "1m30s"). ok is
// false for anything else; callers apply their own bounds and wording.
func Seconds(v any) (secs float64, ok bool) {
	if f, ok := Number(v); ok {
		return f, true
	}
	s, isString := v.(string)
	if !isString {
		return 0, false
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, false
	}
	return d.Seconds(), true
}

// Number reads a number written as one (an integer or a float, as YAML
// and JSON decoders give them) or as a numeric string ("30", " 2.5 ").
// NaN and infinities are not numbers here; ok is false for anything else,
// nothing included. Callers apply their own bounds and wording.
func Number(v any) (f float64, ok bool) {
	switch t := v.(type) {
	case int:
		f = float64(t)
	case int64:
		f = float64(t)
	case uint64:
		f = float64(t)
	case float64:
		f = t
	case string:
		p, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil {
			return 0, false
		}
		f = p
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// Keys returns m's keys in order, so that a document's first bad key is
// the same on every run.
func Keys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
