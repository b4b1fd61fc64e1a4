package statedb

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Timestamp is a time as the agent stored it: float seconds since the epoch
// (the current and March 2026 schemas), integer seconds, or ISO 8601 text
// (the agent's test database). Raw keeps the stored value so a tool can
// return it unchanged; Time is its parsed value, zero when it did not parse.
type Timestamp struct {
	// Raw is the stored value: float64, int64, string, or nil.
	Raw any
	// Time is Raw as a time; zero when Raw is nil or unparseable. Text
	// without a zone is read in the local time zone, as the agent writes it.
	Time time.Time
}

// MarshalJSON encodes the stored value: a number stays a number, text stays
// text, and a missing value is "" (as the original bridge returned it).
func (t Timestamp) MarshalJSON() ([]byte, error) {
	switch x := t.Raw.(type) {
	case nil:
		return []byte(`""`), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return []byte(`""`), nil
		}
		return []byte(pythonFloat(x)), nil
	case int64:
		return json.Marshal(x)
	case string:
		return json.Marshal(x)
	}
	return json.Marshal(fmt.Sprint(t.Raw))
}

// pythonFloat formats f as Python's json.dumps does for the magnitudes of
// timestamps: the shortest text that reads back as f, with ".0" on whole
// numbers (1774785600.0, not 1774785600).
func pythonFloat(f float64) string {
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// Unix returns the time as float seconds since the epoch, 0 when unknown
// (the rule of the original event bridge).
func (t Timestamp) Unix() float64 {
	if t.Time.IsZero() {
		return 0
	}
	switch x := t.Raw.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	}
	return float64(t.Time.Unix()) + float64(t.Time.Nanosecond())/1e9
}

// String returns the stored value as text, as str() did in the original
// bridge's events: float text for numbers, the text itself for text.
func (t Timestamp) String() string {
	if f, ok := t.Raw.(float64); ok {
		switch {
		case math.IsNaN(f):
			return "nan"
		case math.IsInf(f, 1):
			return "inf"
		case math.IsInf(f, -1):
			return "-inf"
		}
		return pythonFloat(f) // "1774785600.0", as str(float)
	}
	return sqlString(t.Raw)
}

// ISO returns the time in the local zone as ISO 8601 without a zone, with
// microseconds only when there are any: the format of sessions.json and of
// Python's datetime.isoformat. It is "" when the time is unknown.
func (t Timestamp) ISO() string {
	if t.Time.IsZero() {
		return ""
	}
	lt := t.Time.Round(time.Microsecond).Local()
	s := lt.Format("2006-01-02T15:04:05")
	if us := lt.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

// NewTimestamp parses a scanned column value into a Timestamp.
func NewTimestamp(v any) Timestamp {
	switch x := v.(type) {
	case nil:
		return Timestamp{}
	case float64:
		return Timestamp{Raw: x, Time: unixTime(x)}
	case int64:
		return Timestamp{Raw: x, Time: unixTime(float64(x))}
	case []byte:
		return NewTimestamp(string(x))
	case time.Time:
		// The driver parsed a column declared DATE, DATETIME or TIMESTAMP.
		return Timestamp{Raw: x.Format(time.RFC3339Nano), Time: x}
	case string:
		return Timestamp{Raw: x, Time: parseTimeText(x)}
	}
	return Timestamp{Raw: sqlString(v)}
}

// unixTime converts float seconds to a time; zero for 0, NaN, infinities
// and values outside years 1..9999.
func unixTime(f float64) time.Time {
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) || f < -62135596800 || f > 253402300799 {
		return time.Time{}
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e9)))
}

// isoLayouts are the ISO 8601 forms Python's datetime.fromisoformat
// accepts in practice, with and without a zone.
var isoLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
	"2006-01-02",
}

// parseTimeText reads a number of seconds or an ISO 8601 time; zero when
// it is neither.
func parseTimeText(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return time.Time{}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return unixTime(f)
	}
	for _, layout := range isoLayouts {
		loc := time.Local
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t
		}
	}
	return time.Time{}
}
