package statedb

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
)

// Lenient conversions of values that come from files and columns the store
// does not control: a wrong type yields the zero value, never an error.
// The JSON ones are exported for the bridge's readers of sessions.json and
// channel_directory.json, so each decoder has one copy.

// sqlString converts a scanned column value to a string.
func sqlString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return ""
}

// sqlInt converts a scanned column value to an int64 (0 when it is not a
// number).
func sqlInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return clampFloat(x)
	case string:
		return parseIntString(x)
	case []byte:
		return parseIntString(string(x))
	case bool:
		if x {
			return 1
		}
	}
	return 0
}

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

// JSONString converts a JSON value to a string: strings as they are,
// numbers and booleans as their JSON text, null and containers as "".
func JSONString(raw json.RawMessage) string {
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

// jsonOptString is JSONString that tells a JSON null (or an absent value)
// apart from the empty string.
func jsonOptString(raw json.RawMessage) *string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	s := JSONString(raw)
	return &s
}

// JSONInt converts a JSON number (or a string of digits) to an int64.
func JSONInt(raw json.RawMessage) int64 {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	if raw[0] == '"' {
		return parseIntString(JSONString(raw))
	}
	if raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') {
		return parseIntString(string(raw))
	}
	return 0
}

// JSONObject decodes raw as a JSON object of raw values; ok is false when
// it is not an object.
func JSONObject(raw []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}
