package tokenstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
)

// utf8BOM starts files written by some editors (the original read files as
// utf-8-sig); it is skipped.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// object is a JSON object being decoded field by field. Each getter removes
// its key, so the keys left at the end are the unknown fields, which are
// written back unchanged. The first problem is kept in err (it names a
// field, never a value) and later getters return zero values.
type object struct {
	fields map[string]json.RawMessage
	err    string
}

// parseObject splits data into the fields of one JSON object. The problem
// it reports never quotes data.
func parseObject(data []byte) (*object, string) {
	data = bytes.TrimPrefix(data, utf8BOM)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return nil, fmt.Sprintf("not valid JSON (at byte %d)", syn.Offset)
		case errors.As(err, &typ):
			return nil, "not a JSON object"
		default:
			return nil, "not valid JSON"
		}
	}
	if fields == nil { // the file is "null"
		return nil, "not a JSON object"
	}
	return &object{fields: fields}, ""
}

// take removes key and returns its value; a missing key, a JSON null and
// an earlier problem all read as absent.
func (o *object) take(key string) (json.RawMessage, bool) {
	raw, ok := o.fields[key]
	delete(o.fields, key)
	if !ok || o.err != "" || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

func (o *object) fail(key, want string) {
	if o.err == "" {
		o.err = fmt.Sprintf("field %q is not %s", key, want)
	}
}

// str takes a string field.
func (o *object) str(key string) string {
	raw, ok := o.take(key)
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		o.fail(key, "a string")
	}
	return s
}

// peekStr returns a string field without taking it (it stays among the
// unknown fields); anything else reads as "".
func (o *object) peekStr(key string) string {
	var s string
	if raw, ok := o.fields[key]; ok && json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// num takes a number of seconds: a JSON integer, a float (the original
// wrote expires_at as time.time() + expires_in, a float; the fraction is
// dropped) or a string holding a number.
func (o *object) num(key string) int64 {
	raw, ok := o.take(key)
	if !ok {
		return 0
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		o.fail(key, "a number")
		return 0
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsNaN(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		o.fail(key, "a number of seconds")
		return 0
	}
	return int64(f)
}

// strs takes an array of strings.
func (o *object) strs(key string) []string {
	raw, ok := o.take(key)
	if !ok {
		return nil
	}
	var s []string
	if json.Unmarshal(raw, &s) != nil {
		o.fail(key, "an array of strings")
		return nil
	}
	return s
}

// obj takes a field that must be a JSON object, as its raw bytes.
func (o *object) obj(key string) json.RawMessage {
	raw, ok := o.take(key)
	if !ok {
		return nil
	}
	if !isObject(raw) {
		o.fail(key, "a JSON object")
		return nil
	}
	return bytes.Clone(raw)
}

// rest returns the fields no getter took, or nil.
func (o *object) rest() map[string]json.RawMessage {
	if len(o.fields) == 0 {
		return nil
	}
	return o.fields
}

// isObject reports whether raw is one valid JSON object.
func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// writer builds the JSON object of a file: the unknown fields first, then
// the known ones, each written only when set.
type writer struct {
	m map[string]any
}

// newWriter starts from extra without the keys the type knows, so an
// Extra entry never stands in for a known field.
func newWriter(extra map[string]json.RawMessage, known ...string) *writer {
	w := &writer{m: make(map[string]any, len(extra)+len(known))}
	for k, v := range extra {
		w.m[k] = v
	}
	for _, k := range known {
		delete(w.m, k)
	}
	return w
}

func (w *writer) str(key, v string) {
	if v != "" {
		w.m[key] = v
	}
}

func (w *writer) num(key string, v int64) {
	if v != 0 {
		w.m[key] = v
	}
}

func (w *writer) strs(key string, v []string) {
	if len(v) > 0 {
		w.m[key] = v
	}
}

func (w *writer) raw(key string, v json.RawMessage) {
	if len(v) > 0 {
		w.m[key] = v
	}
}

// bytes returns the object as indented JSON with sorted keys (URLs keep
// their "&": no HTML escaping) and a final newline.
func (w *writer) bytes() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(w.m); err != nil {
		// Only an invalid Extra value gets here; the message names no value.
		return nil, errors.New("an Extra field is not valid JSON")
	}
	return b.Bytes(), nil
}

// cloneExtra copies an Extra map (nil stays nil).
func cloneExtra(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	c := maps.Clone(m)
	for k, v := range c {
		c[k] = bytes.Clone(v)
	}
	return c
}
