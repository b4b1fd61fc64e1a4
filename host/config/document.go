package config

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Document is config.yaml opened for editing inside Edit. Its methods change
// only the lines of the entries they touch; everything else, including
// comments, blank lines, quoting and other top-level keys, stays
// byte-identical. The file is re-parsed after every change, so an edit that
// would produce invalid YAML fails instead of being written.
//
// Entries written in flow style ({...}) are rewritten in block style when
// they are edited; comments inside such an entry are lost.
type Document struct {
	path   string
	src    []byte
	file   *ast.File
	starts []int // byte offset of the start of each line
}

func newDocument(path string, src []byte) (*Document, error) {
	d := &Document{path: path}
	if err := d.load(src); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Document) load(src []byte) error {
	f, err := parseFile(d.path, src)
	if err != nil {
		return err
	}
	if len(f.Docs) > 1 {
		return fmt.Errorf("%s holds %d YAML documents; keep a single document (remove the extra --- separators) so it can be edited", d.path, len(f.Docs))
	}
	d.src, d.file = src, f
	d.starts = d.starts[:0]
	d.starts = append(d.starts, 0)
	for i, c := range src {
		if c == '\n' && i+1 < len(src) {
			d.starts = append(d.starts, i+1)
		}
	}
	return nil
}

// Bytes returns the current text of the document.
func (d *Document) Bytes() []byte { return bytes.Clone(d.src) }

// Path returns the file the document was read from.
func (d *Document) Path() string { return d.path }

func (d *Document) lineCount() int {
	if len(d.src) == 0 {
		return 0
	}
	return len(d.starts)
}

// lineStart returns the byte offset of 1-based line l (len(src) past the end).
func (d *Document) lineStart(l int) int {
	if l-1 < len(d.starts) && l >= 1 {
		return d.starts[l-1]
	}
	return len(d.src)
}

func (d *Document) lineText(l int) string {
	s, e := d.lineStart(l), d.lineStart(l+1)
	return strings.TrimRight(string(d.src[s:e]), "\r\n")
}

func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

func isBlankOrComment(line string) (blank, comment bool) {
	t := strings.TrimSpace(line)
	return t == "", strings.HasPrefix(t, "#")
}

// splice replaces src[from:to] with text and re-parses.
func (d *Document) splice(from, to int, text string) error {
	if from == len(d.src) && from > 0 && d.src[from-1] != '\n' && text != "" {
		text = "\n" + text
	}
	out := make([]byte, 0, len(d.src)+len(text))
	out = append(out, d.src[:from]...)
	out = append(out, text...)
	out = append(out, d.src[to:]...)
	old := d.src
	if err := d.load(out); err != nil {
		_ = d.load(old)
		return fmt.Errorf("edit of %s would not produce valid YAML (%v); change the file by hand", d.path, err)
	}
	return nil
}

// entry is one key of a block mapping and the lines it owns.
type entry struct {
	key    string
	mv     *ast.MappingValueNode
	indent int
	line   int // line of the key
	lead   int // offset of attached comment lines directly above the key
	start  int // offset of the key line
	end    int // offset just past the last line of the value
}

type mapKind int

const (
	kindNull mapKind = iota
	kindBlock
	kindFlow
	kindOther
)

// mapping describes the value of a key (or the document body).
type mapping struct {
	kind    mapKind
	entries []entry
}

func (m *mapping) find(key string) *entry {
	for i := range m.entries {
		if m.entries[i].key == key {
			return &m.entries[i]
		}
	}
	return nil
}

func unwrap(n ast.Node) ast.Node {
	for {
		switch t := n.(type) {
		case *ast.AnchorNode:
			n = t.Value
		case *ast.TagNode:
			n = t.Value
		default:
			return n
		}
	}
}

func (d *Document) mappingOf(n ast.Node) (*mapping, error) {
	if n == nil {
		return &mapping{kind: kindNull}, nil
	}
	var values []*ast.MappingValueNode
	switch t := unwrap(n).(type) {
	case nil, *ast.NullNode, *ast.CommentGroupNode:
		return &mapping{kind: kindNull}, nil
	case *ast.MappingNode:
		if t.IsFlowStyle {
			return &mapping{kind: kindFlow}, nil
		}
		values = t.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{t}
	default:
		return &mapping{kind: kindOther}, nil
	}
	m := &mapping{kind: kindBlock}
	for _, mv := range values {
		e, err := d.entryOf(mv)
		if err != nil {
			return nil, err
		}
		m.entries = append(m.entries, e)
	}
	return m, nil
}

func (d *Document) entryOf(mv *ast.MappingValueNode) (entry, error) {
	tk := mv.Key.GetToken()
	key := keyText(mv.Key)
	line, col := tk.Position.Line, tk.Position.Column
	text := d.lineText(line)
	ind := indentOf(text)
	if ind != col-1 {
		return entry{}, fmt.Errorf("%s:%d: key %q is not at the start of its line; put each key on its own line to edit it with hermes", d.path, line, key)
	}
	e := entry{key: key, mv: mv, indent: ind, line: line, start: d.lineStart(line)}
	last := line
	for l := line + 1; l <= d.lineCount(); l++ {
		t := d.lineText(l)
		blank, comment := isBlankOrComment(t)
		if blank {
			continue
		}
		if indentOf(t) > ind {
			last = l
			continue
		}
		if comment {
			continue
		}
		break
	}
	e.end = d.lineStart(last + 1)
	lead := line
	for l := line - 1; l >= 1; l-- {
		t := d.lineText(l)
		if _, comment := isBlankOrComment(t); !comment || indentOf(t) != ind {
			break
		}
		lead = l
	}
	e.lead = d.lineStart(lead)
	return e, nil
}

func keyText(k ast.MapKeyNode) string {
	if s, ok := k.(*ast.StringNode); ok {
		return s.Value
	}
	return k.GetToken().Value
}

// body returns the top-level mapping.
func (d *Document) body() (*mapping, error) {
	if len(d.file.Docs) == 0 {
		return &mapping{kind: kindNull}, nil
	}
	m, err := d.mappingOf(d.file.Docs[0].Body)
	if err != nil {
		return nil, err
	}
	if m.kind != kindBlock && m.kind != kindNull {
		return nil, fmt.Errorf("%s: the top level must be a block mapping of keys; fix the file", d.path)
	}
	return m, nil
}

// servers returns the mcp_servers entry (nil when absent) and its mapping.
func (d *Document) servers() (*entry, *mapping, error) {
	top, err := d.body()
	if err != nil {
		return nil, nil, err
	}
	e := top.find(ServersKey)
	if e == nil {
		return nil, &mapping{kind: kindNull}, nil
	}
	m, err := d.mappingOf(e.mv.Value)
	if err != nil {
		return nil, nil, err
	}
	if m.kind == kindOther {
		return nil, nil, fmt.Errorf("%s:%d: %s must be a mapping of server names to settings; fix the file", d.path, e.line, ServersKey)
	}
	return e, m, nil
}

// decodeNode returns the plain value of n with ordered maps.
func (d *Document) decodeNode(n ast.Node) (any, error) {
	if n == nil {
		return nil, nil
	}
	var v any
	if err := yaml.NodeToValue(n, &v, yaml.UseOrderedMap()); err != nil {
		return nil, toParseError(d.path, err)
	}
	return v, nil
}

// Names returns the server names in file order.
func (d *Document) Names() []string {
	_, m, err := d.servers()
	if err != nil || m.kind == kindFlow {
		if err == nil {
			e, _, _ := d.servers()
			v, _ := d.decodeNode(e.mv.Value)
			ms, _ := asMap(v)
			var out []string
			for _, kv := range ms {
				out = append(out, kv.Key)
			}
			return out
		}
		return nil
	}
	out := make([]string, len(m.entries))
	for i, e := range m.entries {
		out[i] = e.key
	}
	return out
}

// Has reports whether a server called name exists.
func (d *Document) Has(name string) bool {
	for _, n := range d.Names() {
		if n == name {
			return true
		}
	}
	return false
}

// server finds the entry of server name, first turning a flow-style
// mcp_servers into block style.
func (d *Document) server(name string) (*entry, error) {
	if err := d.blockServers(); err != nil {
		return nil, err
	}
	_, m, err := d.servers()
	if err != nil {
		return nil, err
	}
	e := m.find(name)
	if e == nil {
		return nil, d.unknown(name)
	}
	return e, nil
}

func (d *Document) unknown(name string) error {
	names := d.Names()
	if len(names) == 0 {
		return fmt.Errorf("server %q not found in %s: no servers are configured; add one first", name, d.path)
	}
	return fmt.Errorf("server %q not found in %s; configured servers: %s", name, d.path, strings.Join(names, ", "))
}

// blockServers rewrites a flow-style mcp_servers value in block style.
func (d *Document) blockServers() error {
	se, m, err := d.servers()
	if err != nil || m.kind != kindFlow {
		return err
	}
	return d.rewrite(se, true, func(v any) any { return v })
}

// rewrite replaces entry e with key: modify(value) emitted in block style.
// Unless force is set, nothing is written when modify changes nothing.
func (d *Document) rewrite(e *entry, force bool, modify func(v any) any) error {
	v, err := d.decodeNode(e.mv.Value)
	if err != nil {
		return err
	}
	var before, after strings.Builder
	emitKV(&before, e.indent, e.key, v)
	emitKV(&after, e.indent, e.key, modify(v))
	if !force && before.String() == after.String() {
		return nil
	}
	return d.splice(e.start, e.end, after.String())
}

// remove deletes entry e with its attached comments. Blank lines after it go
// too when it is the first child or follows a blank line, so that removing
// an entry does not leave a double gap.
func (d *Document) remove(e *entry) error {
	end := e.end
	prevBlank := true
	if e.lead > 0 {
		prevLine := strings.Count(string(d.src[:e.lead]), "\n") // 1-based number of the line above
		blank, _ := isBlankOrComment(d.lineText(prevLine))
		prevBlank = blank || strings.HasSuffix(strings.TrimSpace(d.lineText(prevLine)), ":") && indentOf(d.lineText(prevLine)) < e.indent
	}
	if prevBlank {
		for end < len(d.src) {
			nl := strings.IndexByte(string(d.src[end:]), '\n')
			if nl < 0 || strings.TrimSpace(string(d.src[end:end+nl])) != "" {
				break
			}
			end += nl + 1
		}
	}
	return d.splice(e.lead, end, "")
}

// childIndent returns the indent for new keys inside block entry e.
func childIndent(e *entry, m *mapping) int {
	if len(m.entries) > 0 {
		return m.entries[0].indent
	}
	return e.indent + 2
}

// ServerEntry is an ordered set of settings for a new or replaced server
// entry. Keys are written in the order they were first set. Use the typed
// setters for the common keys and Set for any other.
type ServerEntry struct {
	Fields Map
}

// NewServerEntry returns an empty entry.
func NewServerEntry() *ServerEntry { return &ServerEntry{} }

// Set sets any key of the entry (see Map for the value types).
func (e *ServerEntry) Set(key string, v any) *ServerEntry { e.Fields.Set(key, v); return e }

// Command sets command and, when given, args.
func (e *ServerEntry) Command(cmd string, args ...string) *ServerEntry {
	e.Set("command", cmd)
	if len(args) > 0 {
		e.Args(args...)
	}
	return e
}

// Args sets args.
func (e *ServerEntry) Args(args ...string) *ServerEntry {
	return e.Set("args", append([]string(nil), args...))
}

// Env adds (or replaces) one env variable, keeping the order of calls.
func (e *ServerEntry) Env(key, value string) *ServerEntry { return e.addTo("env", key, value) }

// Header adds (or replaces) one HTTP header, keeping the order of calls.
func (e *ServerEntry) Header(key, value string) *ServerEntry { return e.addTo("headers", key, value) }

func (e *ServerEntry) addTo(field, key, value string) *ServerEntry {
	cur, _ := e.Fields.Get(field)
	m, _ := cur.(Map)
	m.Set(key, value)
	return e.Set(field, m)
}

// Cwd sets cwd.
func (e *ServerEntry) Cwd(dir string) *ServerEntry { return e.Set("cwd", dir) }

// URL sets url.
func (e *ServerEntry) URL(u string) *ServerEntry { return e.Set("url", u) }

// Transport sets transport.
func (e *ServerEntry) Transport(t string) *ServerEntry { return e.Set("transport", t) }

// Timeout sets timeout (written in seconds).
func (e *ServerEntry) Timeout(t time.Duration) *ServerEntry { return e.Set("timeout", t) }

// ConnectTimeout sets connect_timeout (written in seconds).
func (e *ServerEntry) ConnectTimeout(t time.Duration) *ServerEntry {
	return e.Set("connect_timeout", t)
}

// Enabled sets enabled.
func (e *ServerEntry) Enabled(on bool) *ServerEntry { return e.Set("enabled", on) }

// Auth sets auth.
func (e *ServerEntry) Auth(a string) *ServerEntry { return e.Set("auth", a) }

// Include sets tools.include.
func (e *ServerEntry) Include(names ...string) *ServerEntry { return e.setTools("include", names) }

// Exclude sets tools.exclude.
func (e *ServerEntry) Exclude(names ...string) *ServerEntry { return e.setTools("exclude", names) }

func (e *ServerEntry) setTools(key string, names []string) *ServerEntry {
	cur, _ := e.Fields.Get("tools")
	m, _ := cur.(Map)
	m.Set(key, append([]string(nil), names...))
	return e.Set("tools", m)
}

// SetServer adds server name with the settings of entry, or replaces the
// whole existing entry of that name in place (comments directly above it are
// kept). A new server is appended at the end of mcp_servers, which is created
// at the end of the file when missing.
func (d *Document) SetServer(name string, entry *ServerEntry) error {
	if !ValidName(name) {
		return fmt.Errorf("server name %q may only contain letters, digits, \"_\" and \"-\"; choose another name", name)
	}
	old := d.src
	if err := d.setServer(name, entry); err != nil {
		return err
	}
	if !d.Has(name) {
		_ = d.load(old)
		return fmt.Errorf("could not add server %q to %s: the file's layout is not understood; add it by hand", name, d.path)
	}
	return nil
}

func (d *Document) setServer(name string, entry *ServerEntry) error {
	var fields Map
	if entry != nil {
		fields = entry.Fields
	}
	se, m, err := d.servers()
	if err != nil {
		return err
	}
	var b strings.Builder
	switch {
	case se == nil:
		emitKV(&b, 0, ServersKey, Map{{name, fields}})
		return d.splice(len(d.src), len(d.src), b.String())
	case m.kind == kindFlow:
		return d.rewrite(se, true, func(v any) any {
			mm, _ := asMap(v)
			mm.Set(name, fields)
			return mm
		})
	case m.kind == kindNull:
		emitKV(&b, se.indent+2, name, fields)
		keyLine := d.lineText(se.line)
		after := strings.TrimSpace(keyLine[strings.Index(keyLine, ":")+1:])
		if after == "" || strings.HasPrefix(after, "#") {
			return d.splice(se.end, se.end, b.String())
		}
		// "mcp_servers: ~" or "null": drop the value, keep the lines below.
		head := strings.Repeat(" ", se.indent) + ServersKey + ":\n"
		return d.splice(se.start, se.end, head+d.restAfter(se)+b.String())
	}
	if e := m.find(name); e != nil {
		emitKV(&b, e.indent, name, fields)
		return d.splice(e.start, e.end, b.String())
	}
	emitKV(&b, childIndent(se, m), name, fields)
	last := m.entries[len(m.entries)-1].end
	return d.splice(last, last, b.String())
}

// restAfter returns the lines that entry se owns after its key line.
func (d *Document) restAfter(se *entry) string {
	rest := string(d.src[d.lineStart(se.line+1):se.end])
	if rest != "" && !strings.HasSuffix(rest, "\n") {
		rest += "\n"
	}
	return rest
}

// RemoveServer removes server name and the comment lines directly above it.
// When it was the last server, the mcp_servers key is removed too. It
// reports whether the server existed.
func (d *Document) RemoveServer(name string) bool {
	e, err := d.server(name)
	if err != nil {
		return false
	}
	old := d.src
	if err := d.remove(e); err != nil || d.Has(name) {
		_ = d.load(old)
		return false
	}
	se, m, err := d.servers()
	if err == nil && se != nil && m.kind == kindNull {
		_ = d.remove(se)
	}
	return true
}

// SetEnabled sets enabled of server name. Enabling a server that has no
// enabled key changes nothing (true is the default).
func (d *Document) SetEnabled(name string, on bool) error {
	e, err := d.server(name)
	if err != nil {
		return err
	}
	m, err := d.mappingOf(e.mv.Value)
	if err != nil {
		return err
	}
	switch m.kind {
	case kindOther:
		return fmt.Errorf("%s:%d: server %q is not a mapping of settings; fix the entry", d.path, e.line, name)
	case kindNull, kindFlow:
		if m.kind == kindNull && on {
			return nil
		}
		return d.rewrite(e, false, func(v any) any {
			mm, _ := asMap(v)
			mm.Set("enabled", on)
			return mm
		})
	}
	en := m.find("enabled")
	if en == nil {
		if on {
			return nil
		}
		var b strings.Builder
		emitKV(&b, childIndent(e, m), "enabled", false)
		return d.splice(e.end, e.end, b.String())
	}
	if cur, _ := d.decodeNode(en.mv.Value); cur == on {
		return nil
	}
	want := fmt.Sprint(on)
	if from, to, ok := d.scalarRange(en.mv.Value); ok {
		return d.splice(from, to, want)
	}
	var b strings.Builder
	emitKV(&b, en.indent, "enabled", on)
	return d.splice(en.start, en.end, b.String())
}

// scalarRange returns the byte range of a scalar value written on one line.
func (d *Document) scalarRange(n ast.Node) (int, int, bool) {
	if n == nil {
		return 0, 0, false
	}
	switch n.(type) {
	case *ast.StringNode, *ast.BoolNode, *ast.IntegerNode, *ast.FloatNode, *ast.NullNode:
	default:
		return 0, 0, false
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return 0, 0, false
	}
	text := strings.TrimSpace(tk.Origin)
	if text == "" || strings.ContainsAny(text, "\n\r") {
		return 0, 0, false
	}
	line := d.lineText(tk.Position.Line)
	// Column counts characters; convert to a byte offset.
	col, off := 1, 0
	for off < len(line) && col < tk.Position.Column {
		_, size := decodeRune(line[off:])
		off += size
		col++
	}
	if !strings.HasPrefix(line[off:], text) {
		return 0, 0, false
	}
	from := d.lineStart(tk.Position.Line) + off
	return from, from + len(text), true
}

// SetToolsFilter sets tools.include and tools.exclude of server name. An
// empty list removes that key; a tools block left empty is removed; other
// keys of tools (resources, prompts) are kept.
func (d *Document) SetToolsFilter(name string, include, exclude []string) error {
	e, err := d.server(name)
	if err != nil {
		return err
	}
	want := Map{{"include", include}, {"exclude", exclude}}
	m, err := d.mappingOf(e.mv.Value)
	if err != nil {
		return err
	}
	switch m.kind {
	case kindOther:
		return fmt.Errorf("%s:%d: server %q is not a mapping of settings; fix the entry", d.path, e.line, name)
	case kindNull, kindFlow:
		if m.kind == kindNull && len(include) == 0 && len(exclude) == 0 {
			return nil
		}
		return d.rewrite(e, false, func(v any) any {
			mm, _ := asMap(v)
			tv, _ := mm.Get("tools")
			tm, _ := asMap(tv)
			tm = applyFilter(tm, want)
			if len(tm) == 0 {
				mm.Delete("tools")
			} else {
				mm.Set("tools", tm)
			}
			return mm
		})
	}
	te := m.find("tools")
	if te == nil {
		if len(include) == 0 && len(exclude) == 0 {
			return nil
		}
		var b strings.Builder
		emitKV(&b, childIndent(e, m), "tools", applyFilter(nil, want))
		return d.splice(e.end, e.end, b.String())
	}
	tm, err := d.mappingOf(te.mv.Value)
	if err != nil {
		return err
	}
	if tm.kind != kindBlock {
		if tm.kind == kindNull && len(include) == 0 && len(exclude) == 0 {
			return nil
		}
		v, err := d.decodeNode(te.mv.Value)
		if err != nil {
			return err
		}
		cur, ok := asMap(v)
		if !ok && v != nil {
			return fmt.Errorf("%s:%d: tools of server %q must be a mapping; fix the entry", d.path, te.line, name)
		}
		cur = applyFilter(cur, want)
		if len(cur) == 0 {
			return d.remove(te)
		}
		var b strings.Builder
		emitKV(&b, te.indent, "tools", cur)
		return d.splice(te.start, te.end, b.String())
	}
	for _, kv := range want {
		// Re-read positions after every splice.
		e, _ = d.server(name)
		m, _ = d.mappingOf(e.mv.Value)
		te = m.find("tools")
		tm, _ = d.mappingOf(te.mv.Value)
		list, _ := kv.Value.([]string)
		k := tm.find(kv.Key)
		var b strings.Builder
		switch {
		case k == nil && len(list) == 0:
			continue
		case k == nil:
			emitKV(&b, childIndent(te, tm), kv.Key, list)
			err = d.splice(te.end, te.end, b.String())
		case len(list) == 0:
			err = d.remove(k)
		default:
			if cur, _ := d.decodeNode(k.mv.Value); sameList(cur, list) {
				continue
			}
			emitKV(&b, k.indent, kv.Key, list)
			err = d.splice(k.start, k.end, b.String())
		}
		if err != nil {
			return err
		}
	}
	e, _ = d.server(name)
	m, _ = d.mappingOf(e.mv.Value)
	te = m.find("tools")
	if tm, _ = d.mappingOf(te.mv.Value); tm.kind == kindNull {
		return d.remove(te)
	}
	return nil
}

func applyFilter(cur Map, want Map) Map {
	out := append(Map(nil), cur...)
	for _, kv := range want {
		if l, _ := kv.Value.([]string); len(l) > 0 {
			out.Set(kv.Key, l)
		} else {
			out.Delete(kv.Key)
		}
	}
	return out
}

func sameList(cur any, want []string) bool {
	l, ok := cur.([]any)
	if !ok || len(l) != len(want) {
		return false
	}
	for i, x := range l {
		if s, ok := x.(string); !ok || s != want[i] {
			return false
		}
	}
	return true
}
