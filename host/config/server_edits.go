package config

import (
	"fmt"
	"strings"
)

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
	return d.setScalar(name, "enabled", on, on)
}

// SetAuth sets auth of server name to method ("oauth", "exec" or an auth
// plugin's name), replacing the value in place or adding the key at the end
// of the entry; the rest of the entry and its comments stay as they are.
func (d *Document) SetAuth(name, method string) error {
	return d.setScalar(name, "auth", method, false)
}

// setScalar sets key of server name to the scalar v. When the key is
// absent and skipAbsent is set (v is the default), nothing changes.
func (d *Document) setScalar(name, key string, v any, skipAbsent bool) error {
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
		if m.kind == kindNull && skipAbsent {
			return nil
		}
		return d.rewrite(e, false, func(cur any) any {
			mm, _ := asMap(cur)
			mm.Set(key, v)
			return mm
		})
	}
	k := m.find(key)
	if k == nil {
		if skipAbsent {
			return nil
		}
		var b strings.Builder
		emitKV(&b, childIndent(e, m), key, v)
		return d.splice(e.end, e.end, b.String())
	}
	if cur, _ := d.decodeNode(k.mv.Value); cur == v {
		return nil
	}
	if from, to, ok := d.scalarRange(k.mv.Value); ok {
		return d.splice(from, to, scalarText(v))
	}
	var b strings.Builder
	emitKV(&b, k.indent, key, v)
	return d.splice(k.start, k.end, b.String())
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
