package logfile

import (
	"strings"
	"time"
)

// TimeLayout is the layout of the time that starts a stamped line: the one
// hclog writes, so that a source's lines and the host's log sort together.
const TimeLayout = "2006-01-02T15:04:05.000Z0700"

// SourceStamp is a LineWriter.Stamp that starts each line with the time
// and the source's name in brackets: "2026-01-02T15:04:05.000Z [name] ".
// name must not hold spaces or brackets (a server's name does not).
func SourceStamp(name string) func(dst []byte) []byte {
	tag := "[" + name + "] "
	return func(dst []byte) []byte {
		dst = time.Now().AppendFormat(dst, TimeLayout)
		dst = append(dst, ' ')
		return append(dst, tag...)
	}
}

// ParseStamped splits a line SourceStamp started into its time, its
// source's name and the rest; ok is false for a line without a stamp.
func ParseStamped(line string) (t time.Time, source, text string, ok bool) {
	ts, rest, found := strings.Cut(line, " ")
	if !found || !strings.HasPrefix(rest, "[") {
		return time.Time{}, "", "", false
	}
	t, err := time.Parse(TimeLayout, ts)
	if err != nil {
		return time.Time{}, "", "", false
	}
	source, text, found = strings.Cut(rest[1:], "] ")
	if !found || strings.ContainsAny(source, " [") {
		return time.Time{}, "", "", false
	}
	return t, source, text, true
}
