package importer

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/hermes-agent/hermes/host/config"
)

// codexKeys are the keys of a Codex [mcp_servers.NAME] table that
// mapCodexServer reads.
var codexKeys = map[string]bool{
	"command": true, "args": true, "env": true, "env_vars": true, "cwd": true, "url": true,
	"bearer_token_env_var": true, "bearer_token": true, "http_headers": true, "env_http_headers": true,
	"enabled": true, "startup_timeout_sec": true, "startup_timeout_ms": true, "tool_timeout_sec": true,
	"enabled_tools": true, "disabled_tools": true, "transport": true, "type": true,
}

// parseCodex reads Codex's config.toml: its [mcp_servers.NAME] tables.
func parseCodex(src Source, data []byte) ([]*Server, error) {
	var doc map[string]any
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		msg := err.Error()
		if pe, ok := err.(toml.ParseError); ok {
			msg = fmt.Sprintf("line %d: %s", pe.Position.Line, pe.Message)
		}
		return nil, fmt.Errorf("%s is not valid TOML (%s); fix the file or name another with --from", src.Path, oneLine(msg))
	}
	rawServers, ok := doc["mcp_servers"]
	if !ok {
		return nil, nil
	}
	servers, ok := rawServers.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: mcp_servers must be a table of servers; fix the file", src.Path)
	}
	// File order, from the decoder's list of keys.
	var names []string
	seen := map[string]bool{}
	for _, k := range md.Keys() {
		if len(k) >= 2 && k[0] == "mcp_servers" && !seen[k[1]] {
			seen[k[1]] = true
			names = append(names, k[1])
		}
	}
	if len(names) > MaxServers {
		return nil, fmt.Errorf("%s holds %d servers, over the limit of %d; import from a smaller file", src.Path, len(names), MaxServers)
	}
	keyOrder := func(name, table string) []string {
		var out []string
		for _, k := range md.Keys() {
			if len(k) == 4 && k[0] == "mcp_servers" && k[1] == name && k[2] == table {
				out = append(out, k[3])
			}
		}
		return out
	}
	topOrder := func(name string) []string {
		var out []string
		for _, k := range md.Keys() {
			if len(k) == 3 && k[0] == "mcp_servers" && k[1] == name {
				out = append(out, k[2])
			}
		}
		return out
	}
	out := make([]*Server, 0, len(names))
	for _, name := range names {
		s := &Server{Name: HermesName(name), SourceName: name, Source: src, Scope: src.Scope}
		t, ok := servers[name].(map[string]any)
		if !ok {
			s.Err = fmt.Errorf("server %q: want a table of settings", name)
		} else {
			mapCodexServer(s, t, topOrder(name), func(table string) []string { return keyOrder(name, table) })
		}
		out = append(out, s)
	}
	return out, nil
}

// mapCodexServer fills s from one [mcp_servers.NAME] table; order gives the
// keys of the table and order(sub) those of a sub-table, in file order.
func mapCodexServer(s *Server, t map[string]any, order []string, subOrder func(string) []string) {
	m := &mapper{s: s}
	for _, k := range order {
		if !codexKeys[k] {
			switch k {
			case "required":
				s.notef("required (fail the session when the server fails) is not imported; Hermes never fails other servers for one")
			case "oauth", "scopes":
				s.notef("%s is not imported; if the server uses OAuth, run 'hermes mcp login %s' after importing", k, s.Name)
			default:
				s.notef("key %s has no Hermes equivalent; not imported", k)
			}
		}
	}
	str := func(k string) string {
		v, ok := t[k]
		if !ok {
			return ""
		}
		sv, ok := v.(string)
		if !ok {
			s.notef("key %s is not a string; not imported", k)
			return ""
		}
		return strings.TrimSpace(sv)
	}
	command, url := str("command"), str("url")
	switch {
	case command != "" && url != "":
		m.fail("sets both command and url; keep one of them in the client's file")
		return
	case command == "" && url == "":
		m.fail("has neither a command nor a url")
		return
	}
	e := config.NewServerEntry()
	s.Entry = e
	if command != "" {
		e.Command(command)
		if args := tomlStrings(s, "args", t["args"]); len(args) > 0 {
			e.Args(args...)
			m.noteSecretArgs(args)
		}
		env := tomlMap(s, "env", t["env"], subOrder("env"))
		for _, kv := range env {
			m.env(kv.Key, kv.Value.(string))
		}
		// env_vars are taken from the environment Codex runs in; Hermes
		// passes nothing of its own environment unless the entry says so.
		for _, name := range tomlStrings(s, "env_vars", t["env_vars"]) {
			if !envNameRE.MatchString(name) {
				s.notef("env_vars entry %q is not a variable name; not imported", name)
				continue
			}
			if _, dup := env.Get(name); !dup {
				e.Env(name, "${"+name+"}")
			}
		}
		if cwd := str("cwd"); cwd != "" {
			e.Cwd(cwd)
		}
	} else {
		e.URL(url)
		m.noteSecretURL(url)
		if tok := str("bearer_token_env_var"); tok != "" {
			if envNameRE.MatchString(tok) {
				e.Header("Authorization", "Bearer ${"+tok+"}")
			} else {
				s.notef("bearer_token_env_var %q is not a variable name; not imported", tok)
			}
		}
		if tok := str("bearer_token"); tok != "" {
			m.header("Authorization", "Bearer "+tok)
		}
		for _, kv := range tomlMap(s, "http_headers", t["http_headers"], subOrder("http_headers")) {
			m.header(kv.Key, kv.Value.(string))
		}
		for _, kv := range tomlMap(s, "env_http_headers", t["env_http_headers"], subOrder("env_http_headers")) {
			name := kv.Value.(string)
			if !envNameRE.MatchString(name) {
				s.notef("env_http_headers.%s names %q, not a variable; not imported", kv.Key, name)
				continue
			}
			e.Header(kv.Key, "${"+name+"}")
		}
	}
	if v, ok := t["enabled"]; ok {
		if b, isBool := v.(bool); isBool && !b {
			e.Enabled(false)
		}
	}
	if d, ok := tomlSeconds(s, "startup_timeout_sec", t["startup_timeout_sec"], time.Second); ok {
		e.ConnectTimeout(d)
	} else if d, ok := tomlSeconds(s, "startup_timeout_ms", t["startup_timeout_ms"], time.Millisecond); ok {
		e.ConnectTimeout(d)
	}
	if d, ok := tomlSeconds(s, "tool_timeout_sec", t["tool_timeout_sec"], time.Second); ok {
		e.Timeout(d)
	}
	if inc := tomlStrings(s, "enabled_tools", t["enabled_tools"]); len(inc) > 0 {
		e.Include(inc...)
	}
	if exc := tomlStrings(s, "disabled_tools", t["disabled_tools"]); len(exc) > 0 {
		e.Exclude(exc...)
	}
}

// tomlStrings reads a list of strings.
func tomlStrings(s *Server, key string, v any) []string {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		s.notef("key %s is not a list; not imported", key)
		return nil
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		switch t := x.(type) {
		case string:
			out = append(out, t)
		case int64, float64, bool:
			out = append(out, fmt.Sprint(t))
		default:
			s.notef("key %s holds something other than strings; not imported", key)
			return nil
		}
	}
	return out
}

// tomlMap reads a table of strings in the given key order.
func tomlMap(s *Server, key string, v any, order []string) config.Map {
	if v == nil {
		return nil
	}
	t, ok := v.(map[string]any)
	if !ok {
		s.notef("key %s is not a table; not imported", key)
		return nil
	}
	var out config.Map
	done := map[string]bool{}
	add := func(k string) {
		if done[k] {
			return
		}
		done[k] = true
		switch x := t[k].(type) {
		case string:
			out = append(out, config.KV{Key: k, Value: x})
		case int64, float64, bool:
			out = append(out, config.KV{Key: k, Value: fmt.Sprint(x)})
		default:
			s.notef("%s.%s is not a string; not imported", key, k)
		}
	}
	for _, k := range order {
		if _, ok := t[k]; ok {
			add(k)
		}
	}
	if len(done) < len(t) {
		// Inline tables ({ A = "1" }) do not list their keys in order.
		var rest []string
		for k := range t {
			if !done[k] {
				rest = append(rest, k)
			}
		}
		sortStrings(rest)
		for _, k := range rest {
			add(k)
		}
	}
	return out
}

// tomlSeconds reads a positive number of units as a duration.
func tomlSeconds(s *Server, key string, v any, unit time.Duration) (time.Duration, bool) {
	var f float64
	switch t := v.(type) {
	case nil:
		return 0, false
	case int64:
		f = float64(t)
	case float64:
		f = t
	default:
		s.notef("key %s is not a number; not imported", key)
		return 0, false
	}
	if math.IsNaN(f) || f <= 0 || f*float64(unit) > float64(1e9*time.Second) {
		s.notef("key %s is not a positive number of a sensible size; not imported", key)
		return 0, false
	}
	d := time.Duration(math.Ceil(f * float64(unit) / float64(time.Second)))
	return max(d, 1) * time.Second, true
}
