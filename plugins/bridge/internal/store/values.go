package store

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Lenient conversions of JSON values that come from files the store does
// not control: a wrong type yields the zero value, never an error.

func parseIntString(s string) int64 {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return clampFloat(f)
	}
	return 0
}

func clampFloat(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// jsonString converts a JSON value to a string: strings as they are,
// numbers and booleans as their JSON text, null and containers as "".
func jsonString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	case 'n', '{', '[':
		return ""
	}
	return string(raw)
}

// jsonOptString is jsonString that tells a JSON null (or an absent value)
// apart from the empty string.
func jsonOptString(raw json.RawMessage) *string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	s := jsonString(raw)
	return &s
}

// jsonInt converts a JSON number (or a string of digits) to an int64.
func jsonInt(raw json.RawMessage) int64 {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	if raw[0] == '"' {
		return parseIntString(jsonString(raw))
	}
	if raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') {
		return parseIntString(string(raw))
	}
	return 0
}

// jsonObject decodes raw as a JSON object of raw values; ok is false when
// it is not an object.
func jsonObject(raw []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}
