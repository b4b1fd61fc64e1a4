package config

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-yaml"

	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// KV is one key and value of an ordered mapping written to config.yaml.
type KV struct {
	Key   string
	Value any
}

// Map is an ordered mapping written to config.yaml in its order. Values may be
// strings, bools, numbers, time.Duration (written as seconds), []string,
// []any, Map, yaml.MapSlice, map[string]any (written sorted by key) or nil.
type Map []KV

// Set replaces the value of key in place, or appends key when it is new.
func (m *Map) Set(key string, v any) {
	for i := range *m {
		if (*m)[i].Key == key {
			(*m)[i].Value = v
			return
		}
	}
	*m = append(*m, KV{key, v})
}

// Get returns the value of key.
func (m Map) Get(key string) (any, bool) {
	for _, kv := range m {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Delete removes key.
func (m *Map) Delete(key string) {
	for i := range *m {
		if (*m)[i].Key == key {
			*m = append((*m)[:i], (*m)[i+1:]...)
			return
		}
	}
}

var (
	plainSafeRE = lazyregexp.New(`^[A-Za-z0-9_./$()~+=;^-][A-Za-z0-9_./${}()@~+=%,;^<> :'"!?*&#|-]*$`)
	numberishRE = lazyregexp.New(`^[-+]?(\.?[0-9]|0[xob]|\.inf|\.nan)`)
)

// quoteScalar writes s as a YAML scalar that reads back as the same string:
// plain when that is unambiguous, else double-quoted.
func quoteScalar(s string) string {
	if needsQuote(s) {
		return strconv.Quote(s)
	}
	return s
}

func needsQuote(s string) bool {
	if s == "" || !plainSafeRE.MatchString(s) || strings.HasSuffix(s, " ") || strings.HasSuffix(s, ":") {
		return true
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasPrefix(s, "- ") || s == "-" {
		return true
	}
	if strings.ContainsAny(s, "\\") {
		// Plain scalars keep backslashes, but quote to be unambiguous.
		return true
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", "<<":
		return true
	}
	if numberishRE.MatchString(strings.ToLower(s)) {
		return true
	}
	return false
}

func scalarText(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return quoteScalar(t)
	case bool:
		return strconv.FormatBool(t)
	case int:
		return strconv.Itoa(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case uint64:
		return strconv.FormatUint(t, 10)
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1e15 {
			return strconv.FormatFloat(t, 'f', -1, 64)
		}
		return strconv.FormatFloat(t, 'g', -1, 64)
	case time.Duration:
		sec := t.Seconds()
		if sec == math.Trunc(sec) {
			return strconv.FormatInt(int64(sec), 10)
		}
		return strconv.FormatFloat(sec, 'f', -1, 64)
	}
	return quoteScalar(fmt.Sprint(v))
}

// asMap returns v as an ordered Map when it is a mapping.
func asMap(v any) (Map, bool) {
	switch t := v.(type) {
	case Map:
		return t, true
	case yaml.MapSlice:
		m := make(Map, len(t))
		for i, it := range t {
			m[i] = KV{keyString(it.Key), it.Value}
		}
		return m, true
	case map[string]any:
		return sortedMap(t), true
	case map[string]string:
		return sortedMap(t), true
	}
	return nil, false
}

// sortedMap turns a Go map into a Map in key order, so output is stable.
func sortedMap[V any](t map[string]V) Map {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	m := make(Map, len(keys))
	for i, k := range keys {
		m[i] = KV{k, t[k]}
	}
	return m
}

func asList(v any) ([]any, bool) {
	switch t := v.(type) {
	case []any:
		return t, true
	case []string:
		out := make([]any, len(t))
		for i, s := range t {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// emitKV writes "key: value" in block style at indent, ending in a newline.
func emitKV(b *strings.Builder, indent int, key string, v any) {
	pad := strings.Repeat(" ", indent)
	b.WriteString(pad + quoteScalar(key) + ":")
	emitValue(b, indent, v)
}

// emitValue writes v after a "key:" or "-" marker already on the line.
func emitValue(b *strings.Builder, indent int, v any) {
	if m, ok := asMap(v); ok {
		if len(m) == 0 {
			b.WriteString(" {}\n")
			return
		}
		b.WriteString("\n")
		for _, kv := range m {
			emitKV(b, indent+2, kv.Key, kv.Value)
		}
		return
	}
	if l, ok := asList(v); ok {
		if len(l) == 0 {
			b.WriteString(" []\n")
			return
		}
		b.WriteString("\n")
		for _, x := range l {
			b.WriteString(strings.Repeat(" ", indent+2) + "-")
			if m, ok := asMap(x); ok && len(m) > 0 {
				// First key on the dash line, the rest aligned under it.
				var inner strings.Builder
				for _, kv := range m {
					emitKV(&inner, indent+4, kv.Key, kv.Value)
				}
				b.WriteString(" " + strings.TrimLeft(inner.String(), " "))
				continue
			}
			emitValue(b, indent+2, x)
		}
		return
	}
	b.WriteString(" " + scalarText(v) + "\n")
}

func decodeRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }
