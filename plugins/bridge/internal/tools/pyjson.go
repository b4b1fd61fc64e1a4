package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/store"
)

// This file writes JSON text byte for byte as Python's json.dumps does with
// its defaults, which the original bridge used: ensure_ascii (every
// character outside printable ASCII is a \uXXXX escape in lowercase hex,
// astral characters as surrogate pairs), "<", ">" and "&" unescaped, object
// members in insertion order, floats in repr form (1774785600.0, 1e+16), and
// the separators ", " and ": " on one line or "," and ": " with an indent.

// member is one member of an ordered JSON object.
type member struct {
	key   string
	value any
}

// object is a JSON object that keeps its members' order, as a Python dict
// does.
type object []member

// get returns the value of key, nil when absent.
func (o object) get(key string) any {
	for _, m := range o {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// dumps encodes v as json.dumps(v) (indent 0) or json.dumps(v, indent=2)
// (indent 2). v holds nil, bool, string, int, int64, float64,
// json.Number, json.RawMessage, store.Timestamp, []any, []object and
// object values.
func dumps(v any, indent int) (string, error) {
	var b strings.Builder
	if err := encode(&b, v, indent, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func encode(b *strings.Builder, v any, indent, depth int) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		quote(b, x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(pythonFloat(x))
	case json.Number:
		b.WriteString(pythonNumber(string(x)))
	case store.Timestamp:
		return encode(b, timestampValue(x), indent, depth)
	case json.RawMessage:
		val, err := decodeOrdered(x)
		if err != nil {
			return err
		}
		return encode(b, val, indent, depth)
	case []object:
		list := make([]any, len(x))
		for i := range x {
			list[i] = x[i]
		}
		return encode(b, list, indent, depth)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range x {
			separate(b, i, indent, depth+1)
			if err := encode(b, e, indent, depth+1); err != nil {
				return err
			}
		}
		closing(b, indent, depth)
		b.WriteByte(']')
	case object:
		if len(x) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteByte('{')
		for i, m := range x {
			separate(b, i, indent, depth+1)
			quote(b, m.key)
			b.WriteString(": ")
			if err := encode(b, m.value, indent, depth+1); err != nil {
				return err
			}
		}
		closing(b, indent, depth)
		b.WriteByte('}')
	default:
		return fmt.Errorf("encode %T as JSON: unsupported type", v)
	}
	return nil
}

// separate writes what goes before item i of a container at depth.
func separate(b *strings.Builder, i, indent, depth int) {
	if indent == 0 {
		if i > 0 {
			b.WriteString(", ")
		}
		return
	}
	if i > 0 {
		b.WriteByte(',')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(" ", indent*depth))
}

func closing(b *strings.Builder, indent, depth int) {
	if indent > 0 {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(" ", indent*depth))
	}
}

const hexDigits = "0123456789abcdef"

// quote writes s as a JSON string with ensure_ascii=True. Invalid UTF-8
// (which a Python str cannot hold) is written as U+FFFD.
func quote(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r >= 0x20 && r <= 0x7e:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			escape(b, r1)
			escape(b, r2)
		default:
			escape(b, r)
		}
	}
	b.WriteByte('"')
}

func escape(b *strings.Builder, r rune) {
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(r>>shift)&0xf])
	}
}

// pythonFloat formats f as Python's float repr: the shortest text that reads
// back as f, ".0" on whole numbers, exponent form below 1e-4 and from 1e16.
// NaN and the infinities are written as Python writes them.
func pythonFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// Go writes 1e+16 and 1.5e-05 as Python does.
		return s
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// pythonNumber re-encodes a JSON number literal as json.loads then
// json.dumps would: integers keep their digits, other numbers become
// floats.
func pythonNumber(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		return normalInt(lit)
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return lit
	}
	return pythonFloat(f)
}

// normalInt normalises a JSON integer literal of any size as Python's int
// prints it ("-0" is "0").
func normalInt(lit string) string {
	neg := strings.HasPrefix(lit, "-")
	digits := strings.TrimLeft(strings.TrimPrefix(lit, "-"), "0")
	if digits == "" {
		return "0"
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// timestampValue is the stored value of a timestamp as the original
// returned it: numbers as numbers, text as text, a missing value as "".
func timestampValue(t store.Timestamp) any {
	switch x := t.Raw.(type) {
	case nil:
		return ""
	case float64, int64, string:
		return x
	}
	return t.String()
}

// decodeOrdered decodes JSON text into nil, bool, string, json.Number,
// []any and object values, keeping the order of object members as
// Python's json.loads does.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, fmt.Errorf("decode JSON %.60q: %w", data, err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("decode JSON %.60q: trailing data", data)
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // nil, bool, string or json.Number
	}
	switch d {
	case '[':
		list := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token()
		return list, err
	case '{':
		obj := object{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, ok := tok.(string)
			if !ok {
				return nil, errors.New("object key is not a string")
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			// A repeated key keeps its first place and its last value,
			// as in a Python dict.
			replaced := false
			for i := range obj {
				if obj[i].key == key {
					obj[i].value, replaced = v, true
				}
			}
			if !replaced {
				obj = append(obj, member{key, v})
			}
		}
		_, err := dec.Token()
		return obj, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}
