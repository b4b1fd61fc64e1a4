package cmdkit

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/importer"
	"github.com/hermes-agent/hermes/host/toolview"
)

// MaskValue masks the secrets of an entry as written: every value under
// env and headers, and any value whose key names a secret (client_secret,
// API_KEY, ...), unless it is made of ${VAR} references only; a url's
// query secrets are redacted. path is the keys above v.
func MaskValue(path []string, v any) any {
	switch t := v.(type) {
	case yaml.MapSlice:
		out := make(yaml.MapSlice, len(t))
		for i, it := range t {
			k := fmt.Sprint(it.Key)
			out[i] = yaml.MapItem{Key: it.Key, Value: MaskValue(append(path[:len(path):len(path)], k), it.Value)}
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = MaskValue(append(path[:len(path):len(path)], k), x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = MaskValue(path, x)
		}
		if len(path) > 0 && path[len(path)-1] == "args" {
			MaskArgList(out)
		}
		return out
	case string:
		if len(path) == 0 {
			return t
		}
		last := path[len(path)-1]
		parent := ""
		if len(path) > 1 {
			parent = path[len(path)-2]
		}
		switch {
		case len(path) == 2 && (parent == "env" || parent == "headers"), SecretKey(path):
			return MaskSecret(t)
		case last == "url":
			return toolview.Redact(t)
		case last == "args" && len(path) == 1:
			words := config.SplitArgs(t)
			if masked := importer.MaskArgv(words); !slices.Equal(masked, words) {
				return strings.Join(masked, " ")
			}
		}
		return t
	case nil, bool, int, int64, uint64, float64:
		if t != nil && (SecretKey(path) || len(path) == 2 && (path[0] == "env" || path[0] == "headers")) {
			return "***"
		}
		return t
	}
	return v
}

// YamlLines writes v (a masked entry) as YAML lines for the terminal.
func YamlLines(v any) []string {
	if m, ok := v.(map[string]any); ok {
		// A plain map (no file order): sorted keys.
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		ms := make(yaml.MapSlice, 0, len(keys))
		for _, k := range keys {
			ms = append(ms, yaml.MapItem{Key: k, Value: SortedMaps(m[k])})
		}
		v = ms
	}
	b, err := yaml.MarshalWithOptions(v, yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return []string{"(cannot show: " + OneLine(err.Error()) + ")"}
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// MaskArgList masks, in place, the secret-looking words of an args list
// (importer.MaskArgv); words that are not strings stay.
func MaskArgList(list []any) {
	words := make([]string, len(list))
	for i, x := range list {
		words[i], _ = x.(string)
	}
	for i, w := range importer.MaskArgv(words) {
		if _, ok := list[i].(string); ok {
			list[i] = w
		}
	}
}

// SecretKey reports whether the value at path is under a secret's name
// (oauth.client_secret, an unknown api_key: key); the entry's own keys
// (auth: oauth) are not.
func SecretKey(path []string) bool {
	if len(path) == 0 {
		return false
	}
	last := path[len(path)-1]
	if len(path) == 1 && (last == "auth" || last == "oauth") {
		return false
	}
	return importer.IsSecretName(last)
}

// SortedMaps turns nested plain maps into MapSlices sorted by key.
func SortedMaps(v any) any {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		ms := make(yaml.MapSlice, 0, len(keys))
		for _, k := range keys {
			ms = append(ms, yaml.MapItem{Key: k, Value: SortedMaps(t[k])})
		}
		return ms
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = SortedMaps(x)
		}
		return out
	}
	return v
}
