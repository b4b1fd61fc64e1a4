package approval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hermes-agent/hermes/host/termsafe"
)

// Bounds of the arguments an approval shows. An approval shows an
// object's arguments key by key, one line each, in the order the server
// receives them (sorted, as the call encodes them): a long value of one
// key never hides another key. Whatever is cut is said, never silently:
// its size, and for a JSON object the keys that were not shown, e.g.
// "… 5.2 KB more not shown (keys: path, mode)".
const (
	// MaxValueShown bounds one argument's value, in bytes of compact
	// JSON.
	MaxValueShown = 300
	// MaxArgumentsShown bounds the values shown in all, in bytes; the
	// keys past it are named on a last line with the size they hold.
	// Arguments that are not a JSON object are cut at it as a whole.
	MaxArgumentsShown = 4000
	// maxKeyShown bounds a key's name as shown, in bytes.
	maxKeyShown = 64
	// maxKeysNamed bounds how many keys one "not shown" note names.
	maxKeysNamed = 20
)

// describe is the approval's text: a line naming the call, then its
// arguments, escaped and bounded (see MaxValueShown). The terminal shows
// it line by line; the approval's description in state.db holds it whole.
func describe(r Request) string {
	head := fmt.Sprintf("Call tool %s (server '%s', tool '%s')",
		termsafe.Escape(r.Name), termsafe.Escape(r.Server), termsafe.Escape(r.Tool))
	args := bytes.TrimSpace(r.Arguments)
	if len(args) == 0 {
		args = []byte("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		shown, note := clip(args, MaxArgumentsShown)
		return head + " with arguments " + termsafe.Escape(shown) + note
	}
	if len(obj) == 0 {
		return head + " with arguments {}"
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range obj {
			if !yield(k) {
				return
			}
		}
	})
	lines := []string{head + " with arguments:"}
	used := 0
	var rest []string
	restBytes := 0
	for _, k := range keys {
		if used >= MaxArgumentsShown {
			rest = append(rest, k)
			restBytes += len(k) + len(compact(obj[k]))
			continue
		}
		shown, note := clip(obj[k], MaxValueShown)
		used += len(shown)
		lines = append(lines, "  "+keyName(k)+": "+termsafe.Escape(shown)+note)
	}
	if len(rest) > 0 {
		lines = append(lines, "  "+notShown(restBytes, rest))
	}
	return strings.Join(lines, "\n")
}

// clip returns raw as compact JSON cut to bound bytes (at a character),
// and, when it was cut, the note saying what was not shown.
func clip(raw []byte, bound int) (shown, note string) {
	text, ends := layout(raw)
	if len(text) <= bound {
		return text, ""
	}
	cut := bound
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	var hidden []string
	for _, e := range ends {
		if e.end > cut {
			hidden = append(hidden, e.key)
		}
	}
	return text[:cut], notShown(len(text)-cut, hidden)
}

// keyEnd is where a key of an object ends in its compact text (after
// the colon).
type keyEnd struct {
	key string
	end int
}

// layout is raw as compact JSON, an object's keys sorted (as the call
// encodes it), with where each of its keys ends.
func layout(raw []byte) (string, []keyEnd) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return compact(raw), nil
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range obj {
			if !yield(k) {
				return
			}
		}
	})
	var b strings.Builder
	ends := make([]keyEnd, 0, len(keys))
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		ends = append(ends, keyEnd{key: k, end: b.Len()})
		b.WriteString(compact(obj[k]))
	}
	b.WriteByte('}')
	return b.String(), ends
}

// compact is raw as compact JSON (as it is when it is not JSON).
func compact(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return string(raw)
}

// notShown is the note of a cut: "… 5.2 KB more not shown (keys: path,
// mode)".
func notShown(n int, keys []string) string {
	s := "… " + size(n) + " more not shown"
	if len(keys) == 0 {
		return s
	}
	named := make([]string, 0, min(len(keys), maxKeysNamed))
	for _, k := range keys[:min(len(keys), maxKeysNamed)] {
		named = append(named, keyName(k))
	}
	more := ""
	if len(keys) > maxKeysNamed {
		more = fmt.Sprintf(" and %d more", len(keys)-maxKeysNamed)
	}
	return s + " (keys: " + strings.Join(named, ", ") + more + ")"
}

// keyName is a key as shown: bounded by maxKeyShown, and quoted as JSON
// unless it is plain (letters, digits, "_", "-", "."), so that a key
// cannot pass for a line's value or for several keys.
func keyName(k string) string {
	plain := k != ""
	for _, c := range k {
		if !(c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			plain = false
			break
		}
	}
	if !plain {
		b, _ := json.Marshal(k)
		k = string(b)
	}
	if len(k) > maxKeyShown {
		cut := maxKeyShown
		for cut > 0 && !utf8.RuneStart(k[cut]) {
			cut--
		}
		k = k[:cut] + "…"
	}
	return termsafe.Escape(k)
}

// size is n bytes for a person: "312 bytes", "5.2 KB", "1.3 MB".
func size(n int) string {
	switch {
	case n < 1024:
		if n == 1 {
			return "1 byte"
		}
		return fmt.Sprintf("%d bytes", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
}
