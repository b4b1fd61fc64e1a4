package config

import (
	"bytes"
	"fmt"
	"strings"

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

// restAfter returns the lines that entry se owns after its key line.
func (d *Document) restAfter(se *entry) string {
	rest := string(d.src[d.lineStart(se.line+1):se.end])
	if rest != "" && !strings.HasSuffix(rest, "\n") {
		rest += "\n"
	}
	return rest
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
