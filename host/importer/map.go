package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	fielddec "github.com/hermes-agent/hermes/host/fields"
	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// Parse reads the servers of data, the content of src.Path in
// src.Client's format. A file that does not parse, or whose server list is
// not an object, is an error; a server that cannot be mapped is returned
// with Err set, and the others still are.
func Parse(src Source, data []byte) ([]*Server, error) {
	if src.Client == Codex {
		return parseCodex(src, data)
	}
	top, err := parseObject(stripJSONC(data))
	if err != nil {
		return nil, &ParseError{Path: src.Path, Err: err}
	}
	var out []*Server
	add := func(raw json.RawMessage, key, scope string) error {
		list, err := serversFrom(src, raw, scope)
		if err != nil {
			return &ParseError{Path: src.Path, Where: key, Err: err}
		}
		out = append(out, list...)
		return nil
	}
	scope := src.Scope
	switch src.Client {
	case VSCode:
		raw, ok := top.get("servers")
		if !ok {
			// VS Code's settings.json: "mcp": {"servers": {...}}.
			if m, ok := top.get("mcp"); ok {
				if inner, err := parseObject(m); err == nil {
					raw, ok = inner.get("servers")
				}
			}
		}
		if raw != nil {
			if err := add(raw, "servers", scope); err != nil {
				return nil, err
			}
		}
		addInputNotes(top, out)
	case Claude:
		// ~/.claude.json: the servers of this project (local scope) and of
		// every project (user scope).
		if projects, ok := top.get("projects"); ok && src.Dir != "" {
			if po, err := parseObject(projects); err == nil {
				for dir := src.Dir; ; dir = filepath.Dir(dir) {
					if p, ok := po.get(dir); ok {
						if pobj, err := parseObject(p); err == nil {
							if raw, ok := pobj.get("mcpServers"); ok {
								if err := add(raw, "projects."+dir+".mcpServers", ScopeLocal); err != nil {
									return nil, err
								}
							}
						}
						break
					}
					if filepath.Dir(dir) == dir {
						break
					}
				}
			}
		}
		fallthrough
	default:
		if raw, ok := top.get("mcpServers"); ok {
			if err := add(raw, "mcpServers", scope); err != nil {
				return nil, err
			}
		}
	}
	if len(out) > MaxServers {
		return nil, fmt.Errorf("%s holds %d servers, over the limit of %d; import from a smaller file", src.Path, len(out), MaxServers)
	}
	return out, nil
}

// ParseError is a client's file that cannot be read: not JSON (Err is
// then a *SyntaxError, with the line), or a server list that is not an
// object (Where names it).
type ParseError struct {
	Path, Where string
	Err         error
}

func (e *ParseError) Error() string {
	return e.Path + ": " + e.Problem() + "; fix the file or name another with --from"
}

// Problem is what is wrong, without the file's name or what to do.
func (e *ParseError) Problem() string {
	if e.Where != "" {
		return e.Where + ": " + e.Err.Error()
	}
	return e.Err.Error()
}

func (e *ParseError) Unwrap() error { return e.Err }

// serversFrom maps each server of an mcpServers (or servers) object.
func serversFrom(src Source, raw json.RawMessage, scope string) ([]*Server, error) {
	if kindOf(raw) == "null" {
		return nil, nil
	}
	obj, err := parseObject(raw)
	if err != nil {
		return nil, err
	}
	if len(obj.keys) > MaxServers {
		return nil, fmt.Errorf("%d servers, over the limit of %d", len(obj.keys), MaxServers)
	}
	out := make([]*Server, 0, len(obj.keys))
	for _, name := range obj.keys {
		s := &Server{Name: HermesName(name), SourceName: name, Source: src, Scope: scope}
		mapJSONServer(s, obj.vals[name])
		out = append(out, s)
	}
	return out, nil
}

// FromJSON maps one server given as a JSON object in the shape the other
// clients' files use ({"type": ..., "command": ..., "args": [...], "env":
// {...}, "url": ..., "headers": {...}}) to the Hermes entry of server name
// (already a valid Hermes name). Gemini CLI's httpUrl and Windsurf's
// serverUrl are read as a streamable HTTP url. A JSON text that is not one
// object is an error; a server that cannot be mapped has Err set.
func FromJSON(name string, data []byte, home, cwd string) (*Server, error) {
	obj, err := parseObject(stripJSONC(data))
	if err != nil {
		return nil, err
	}
	if _, ok := obj.get("mcpServers"); ok {
		return nil, fmt.Errorf("this is a whole config file (it has mcpServers), not one server; pass it to 'hermes mcp import --from FILE'")
	}
	if _, ok := obj.get("servers"); ok {
		return nil, fmt.Errorf("this is a whole config file (it has servers), not one server; pass it to 'hermes mcp import --from FILE'")
	}
	s := &Server{Name: name, SourceName: name, Source: Source{Dir: cwd, Home: home}, Scope: ScopeFile}
	mapJSONServer(s, data)
	return s, nil
}

// jsonKeys are the keys of a server object that mapJSONServer reads.
var jsonKeys = map[string]bool{
	"type": true, "transport": true, "command": true, "args": true, "env": true, "cwd": true,
	"url": true, "httpUrl": true, "serverUrl": true, "headers": true, "timeout": true,
	"disabled": true, "enabled": true, "includeTools": true, "excludeTools": true, "oauth": true,
}

// ignoredKeys are keys of other clients with no Hermes meaning, dropped
// without a note.
var ignoredKeys = map[string]bool{"description": true, "gallery": true, "version": true, "$schema": true}

// keyNotes explain the keys Hermes has no equivalent for.
var keyNotes = map[string]string{
	"trust":            "trust (skip confirmations) has no Hermes equivalent; not imported",
	"headersHelper":    "headersHelper (a script that prints headers) is not imported; use auth: exec with an exec: block instead",
	"envFile":          "envFile is not read; put its values in .env and refer to them as ${VAR} in env:",
	"authProviderType": "authProviderType is not imported; Hermes supports auth: oauth and auth: exec",
	"alwaysAllow":      "alwaysAllow (auto-approved tools) has no Hermes equivalent; not imported",
	"autoApprove":      "autoApprove (auto-approved tools) has no Hermes equivalent; not imported",
	"sandbox":          "the client's sandbox settings are not imported; see the sandbox: key of config.yaml",
	"sandboxEnabled":   "the client's sandbox settings are not imported; see the sandbox: key of config.yaml",
	"dev":              "dev (VS Code's watch-and-restart settings) is not imported",
}

// mapJSONServer fills s from one server object of a JSON config file.
func mapJSONServer(s *Server, raw json.RawMessage) {
	obj, err := parseObject(raw)
	if err != nil {
		s.Err = fmt.Errorf("server %q: want an object of settings, got %s", s.SourceName, kindOf(raw))
		return
	}
	m := &mapper{s: s, gemini: s.Source.Client == Gemini}
	for _, k := range obj.keys {
		if jsonKeys[k] || ignoredKeys[k] {
			continue
		}
		if n, ok := keyNotes[k]; ok {
			s.notef("%s", n)
		} else {
			s.notef("key %s has no Hermes equivalent; not imported", k)
		}
	}
	str := func(k string) string { return m.str(obj, k) }

	typ := strings.ToLower(str("type"))
	if typ == "" {
		typ = strings.ToLower(str("transport"))
	}
	command := str("command")
	url, urlKey := "", ""
	for _, k := range []string{"httpUrl", "serverUrl", "url"} {
		if u := str(k); u != "" && url == "" {
			url, urlKey = u, k
		}
	}
	transport := ""
	if typ != "" {
		t, ok := config.TypeTransport(typ)
		if !ok {
			m.fail("type %q is not a transport Hermes has (stdio, http, sse)", typ)
			return
		}
		transport = t
	}
	switch {
	case command != "" && url != "":
		m.fail("sets both command and %s; keep one of them in the client's file, or add it with 'hermes mcp add'", urlKey)
		return
	case command == "" && url == "":
		m.fail("has neither a command nor a url")
		return
	case command != "" && transport != "" && transport != "stdio":
		m.fail("type %s needs a url, but it has a command", typ)
		return
	case url != "" && transport == "stdio":
		m.fail("type stdio needs a command, but it has a url")
		return
	}
	e := config.NewServerEntry()
	s.Entry = e
	if command != "" {
		e.Command(m.value(command))
		if args := m.strList(obj, "args"); len(args) > 0 {
			for i := range args {
				args[i] = m.value(args[i])
			}
			e.Args(args...)
			m.noteSecretArgs(args)
		}
		for _, kv := range m.strMap(obj, "env") {
			m.env(kv.Key, kv.Value.(string))
		}
		if cwd := m.value(str("cwd")); cwd != "" {
			// A relative folder is the project's (the working folder).
			if !filepath.IsAbs(cwd) && !strings.HasPrefix(cwd, "~") && !strings.HasPrefix(cwd, "$") && m.s.Source.Dir != "" {
				cwd = filepath.Join(m.s.Source.Dir, cwd)
			}
			e.Cwd(cwd)
		}
	} else {
		e.URL(m.value(url))
		switch {
		case transport == "sse", m.gemini && urlKey == "url" && transport == "":
			// Gemini CLI's url is the SSE endpoint (httpUrl the
			// streamable one).
			e.Transport("sse")
		}
		m.noteSecretURL(url)
		for _, kv := range m.strMap(obj, "headers") {
			m.header(kv.Key, kv.Value.(string))
		}
		if m.gemini || obj.vals["oauth"] != nil {
			m.oauth(obj)
		}
	}
	if _, ok := obj.get("timeout"); ok {
		if m.gemini {
			if ms, ok := m.number(obj, "timeout"); ok && ms > 0 {
				e.Timeout(time.Duration(math.Ceil(ms/1000)) * time.Second)
			}
		} else {
			s.notef("timeout is not imported (its unit differs between clients); set timeout: in seconds in config.yaml")
		}
	}
	if b, ok := m.boolean(obj, "disabled"); ok && b {
		e.Enabled(false)
	}
	if b, ok := m.boolean(obj, "enabled"); ok && !b {
		e.Enabled(false)
	}
	if inc := m.strList(obj, "includeTools"); len(inc) > 0 {
		e.Include(inc...)
	}
	if exc := m.strList(obj, "excludeTools"); len(exc) > 0 {
		e.Exclude(exc...)
	}
}

// mapper maps the values of one server, collecting notes and secrets.
type mapper struct {
	s      *Server
	gemini bool
}

func (m *mapper) fail(format string, args ...any) {
	m.s.Err = fmt.Errorf("server %q: "+format, append([]any{m.s.SourceName}, args...)...)
	m.s.Entry = nil
}

func (m *mapper) str(obj *object, k string) string {
	raw, ok := obj.get(k)
	if !ok {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		if kindOf(raw) != "null" {
			m.s.notef("key %s is %s, not a string; not imported", k, kindOf(raw))
		}
		return ""
	}
	return strings.TrimSpace(s)
}

func (m *mapper) boolean(obj *object, k string) (bool, bool) {
	raw, ok := obj.get(k)
	if !ok {
		return false, false
	}
	v, ok := decoded(raw)
	b, err := fielddec.Bool(k, v, false)
	if !ok || err != nil {
		m.s.notef("key %s is %s, not true or false; not imported", k, kindOf(raw))
		return false, false
	}
	return b, true
}

func (m *mapper) number(obj *object, k string) (float64, bool) {
	raw, _ := obj.get(k)
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f > 1e12 {
		m.s.notef("key %s is %s, not a number; not imported", k, kindOf(raw))
		return 0, false
	}
	return f, true
}

// decoded is raw as a plain value for host/fields, numbers as written
// (json.Number); ok is false when raw is not JSON.
func decoded(raw json.RawMessage) (v any, ok bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return v, d.Decode(&v) == nil
}

// scalarText is a JSON scalar as text (strings unquoted, numbers as
// written, null empty: fields.Text); ok is false for objects and lists.
func scalarText(raw json.RawMessage) (string, bool) {
	v, ok := decoded(raw)
	if !ok {
		return "", false
	}
	s, err := fielddec.Text("", v)
	return s, err == nil
}

func (m *mapper) strList(obj *object, k string) []string {
	raw, ok := obj.get(k)
	if !ok || kindOf(raw) == "null" {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		m.s.notef("key %s is %s, not a list; not imported", k, kindOf(raw))
		return nil
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := scalarText(it)
		if !ok {
			m.s.notef("key %s holds %s, not only strings; not imported", k, kindOf(it))
			return nil
		}
		out = append(out, s)
	}
	return out
}

func (m *mapper) strMap(obj *object, k string) config.Map {
	raw, ok := obj.get(k)
	if !ok || kindOf(raw) == "null" {
		return nil
	}
	o, err := parseObject(raw)
	if err != nil {
		m.s.notef("key %s is %s, not an object; not imported", k, kindOf(raw))
		return nil
	}
	var out config.Map
	for _, key := range o.keys {
		v, ok := scalarText(o.vals[key])
		if !ok {
			m.s.notef("%s.%s is %s, not a string; not imported", k, key, kindOf(o.vals[key]))
			continue
		}
		out = append(out, config.KV{Key: key, Value: v})
	}
	return out
}

var (
	inputRE     = lazyregexp.New(`\$\{input:([^}]*)\}`)
	bareVarRE   = lazyregexp.New(`\$([A-Za-z_][A-Za-z0-9_]*)`)
	predefRE    = lazyregexp.New(`\$\{(workspaceFolder|workspaceFolderBasename|userHome|pathSeparator|/|CLAUDE_PROJECT_DIR)\}`)
	envNameRE   = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
	inputNoteRE = lazyregexp.New(`[^A-Za-z0-9_.-]`)
)

// value rewrites the client's placeholders into what Hermes reads: the
// editors' ${workspaceFolder} and ${userHome} become the folders they
// stand for, VS Code's ${input:id} becomes ${MCP_<NAME>_<ID>} (with a note
// to set it in .env), and Gemini CLI's $VAR becomes ${VAR}. ${VAR},
// ${env:VAR} and ${VAR:-default} are Hermes's own and stay.
func (m *mapper) value(v string) string {
	v = predefRE.ReplaceAllStringFunc(v, func(ref string) string {
		switch ref[2 : len(ref)-1] {
		case "workspaceFolder", "CLAUDE_PROJECT_DIR":
			if m.s.Source.Dir != "" {
				return m.s.Source.Dir
			}
		case "workspaceFolderBasename":
			if m.s.Source.Dir != "" {
				return filepath.Base(m.s.Source.Dir)
			}
		case "userHome":
			if m.s.Source.Home != "" {
				return m.s.Source.Home
			}
		case "pathSeparator", "/":
			return string(filepath.Separator)
		}
		return ref
	})
	v = inputRE.ReplaceAllStringFunc(v, func(ref string) string {
		id := ref[len("${input:") : len(ref)-1]
		name := VarName(m.s.Name, id)
		note := fmt.Sprintf("VS Code asks for input %q when it starts this server; set %s in .env", inputNoteRE.ReplaceAllString(id, "_"), name)
		if !containsNote(m.s.Notes, note) {
			m.s.Notes = append(m.s.Notes, note)
		}
		return "${" + name + "}"
	})
	if m.gemini {
		// $VAR (not ${VAR}, not $${...}) is Gemini CLI's too.
		var b strings.Builder
		last := 0
		for _, loc := range bareVarRE.FindAllStringIndex(v, -1) {
			if loc[0] > 0 && v[loc[0]-1] == '$' {
				continue
			}
			b.WriteString(v[last:loc[0]])
			b.WriteString("${" + v[loc[0]+1:loc[1]] + "}")
			last = loc[1]
		}
		b.WriteString(v[last:])
		v = b.String()
	}
	return v
}

func containsNote(notes []string, n string) bool {
	for _, x := range notes {
		if x == n {
			return true
		}
	}
	return false
}

// env adds one env variable, moving a secret's value to .env.
func (m *mapper) env(key, val string) {
	val = m.value(val)
	if !envNameRE.MatchString(key) {
		m.s.notef("env %q is not a variable name; not imported", key)
		return
	}
	m.s.Entry.Env(key, m.secret(key, val, "env "+key, ""))
}

// header adds one HTTP header, moving a secret's value to .env. The
// scheme of an Authorization value ("Bearer ") stays in config.yaml.
func (m *mapper) header(key, val string) {
	val = m.value(val)
	if key == "" || strings.ContainsAny(key, " \t\r\n:") {
		m.s.notef("header %q is not a header name; not imported", key)
		return
	}
	scheme := ""
	if s, rest, ok := strings.Cut(strings.TrimSpace(val), " "); ok && isScheme(s) && strings.TrimSpace(rest) != "" {
		scheme, val = s+" ", strings.TrimSpace(rest)
	}
	m.s.Entry.Header(key, m.secret(key, val, "header "+key, scheme))
}

// secret returns val, or a ${VAR} reference to a new secret holding it
// when key names a secret or val looks like one, prefixed by scheme. A
// value that refers to ${...} variables is kept as written.
func (m *mapper) secret(key, val, from, scheme string) string {
	if val == "" || !(IsSecretName(key) || looksSecret(scheme+val)) {
		return scheme + val
	}
	if strings.Contains(val, "${") {
		if literalPart(val) != "" && IsSecretName(key) {
			m.s.notef("%s mixes written-out text with ${...} references; kept as written: move the secret part to .env by hand", from)
		}
		return scheme + val
	}
	v := VarName(m.s.Name, key)
	m.s.Secrets = append(m.s.Secrets, Secret{Var: v, Value: val, From: from})
	return scheme + "${" + v + "}"
}

// noteSecretArgs notes arguments that look like secrets (a token on the
// command line); they are kept, since an argument cannot be moved safely.
func (m *mapper) noteSecretArgs(args []string) {
	for i, a := range args {
		if !strings.Contains(a, "${") && looksSecret(a) {
			m.s.notef("argument %d looks like a secret; it stays in config.yaml as written: move it to .env and write ${VAR} in its place", i+1)
		}
	}
}

// noteSecretURL notes a url whose query carries a secret.
func (m *mapper) noteSecretURL(u string) {
	if !strings.Contains(u, "${") && looksSecret(u) {
		m.s.notef("the url carries what looks like a secret; it stays in config.yaml as written: move it to .env and write ${VAR} in its place")
	}
}

// oauth maps an oauth block: Claude Code's {clientId, callbackPort},
// Gemini CLI's {enabled, clientId, clientSecret, scopes}.
func (m *mapper) oauth(obj *object) {
	raw, ok := obj.get("oauth")
	if !ok || kindOf(raw) == "null" {
		return
	}
	o, err := parseObject(raw)
	if err != nil {
		m.s.notef("key oauth is %s, not an object; not imported", kindOf(raw))
		return
	}
	if b, ok := m.boolean(o, "enabled"); ok && !b {
		return
	}
	e := m.s.Entry
	e.Auth("oauth")
	for _, k := range o.keys {
		switch k {
		case "enabled":
		case "clientId":
			if id := m.str(o, k); id != "" {
				e.OAuth("client_id", id)
			}
		case "clientSecret":
			if sec := m.str(o, k); sec != "" {
				v := VarName(m.s.Name, "CLIENT_SECRET")
				m.s.Secrets = append(m.s.Secrets, Secret{Var: v, Value: sec, From: "oauth clientSecret"})
				e.OAuth("client_secret", "${"+v+"}")
			}
		case "scopes":
			if sc := m.strList(o, k); len(sc) > 0 {
				e.OAuth("scope", strings.Join(sc, " "))
			}
		case "callbackPort":
			if p, ok := m.number(o, k); ok && p >= 0 && p <= 65535 {
				e.OAuth("redirect_port", int(p))
			}
		default:
			m.s.notef("oauth.%s is not imported; Hermes discovers the authorization server itself", k)
		}
	}
}

// addInputNotes adds the description of each VS Code input a server uses
// to the note that asks for it.
func addInputNotes(top *object, servers []*Server) {
	raw, ok := top.get("inputs")
	if !ok {
		return
	}
	var inputs []struct {
		ID          string `json:"id"`
		Description string `json:"description"`
	}
	if json.Unmarshal(raw, &inputs) != nil {
		return
	}
	for _, s := range servers {
		for i, n := range s.Notes {
			for _, in := range inputs {
				id := inputNoteRE.ReplaceAllString(in.ID, "_")
				if in.Description != "" && strings.HasPrefix(n, "VS Code asks for input "+strconv.Quote(id)+" ") {
					s.Notes[i] = n + " (" + strconv.Quote(oneLine(in.Description)) + ")"
				}
			}
		}
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return s
}
