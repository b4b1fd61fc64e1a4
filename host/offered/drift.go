package offered

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// ChangeKind says how a tool differs from its approved definition.
type ChangeKind string

// Kinds of change.
const (
	// Changed: the tool's description, input schema or annotations differ
	// from the approved ones.
	Changed ChangeKind = "changed"
	// Added: the server lists a tool that was never approved.
	Added ChangeKind = "added"
	// Removed: an approved tool the server no longer lists.
	Removed ChangeKind = "removed"
)

// Change is one tool whose definition drifted from its baseline.
type Change struct {
	// Tool is the tool's name as the server lists it.
	Tool string     `json:"tool"`
	Kind ChangeKind `json:"kind"`
	// Description is set when the description changed.
	Description bool `json:"description,omitempty"`
	// Schema is the change of the input schema, nil when it is the same.
	Schema *SchemaChange `json:"input_schema,omitempty"`
	// Annotations lists the annotation fields that changed, sorted.
	Annotations []string `json:"annotations,omitempty"`
	// WasDescription is the approved description, cut to MaxExcerptBytes
	// (Changed); Current the listed definition (Changed, Added).
	WasDescription string         `json:"-"`
	Current        *mcpvalue.Tool `json:"-"`
}

// SchemaChange is how an input schema changed.
type SchemaChange struct {
	// Added, Removed and Changed name properties, sorted.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
	// Other lists the schema's other keys that changed (required, type,
	// ...), sorted.
	Other []string `json:"other,omitempty"`
}

// Summary says in one line what changed, e.g. "description changed;
// input schema: property path added, property mode changed; annotations:
// destructiveHint changed". Names are the server's: escape them before a
// terminal.
func (c Change) Summary() string {
	switch c.Kind {
	case Added:
		return "new tool, not approved yet"
	case Removed:
		return "no longer offered"
	}
	var parts []string
	if c.Description {
		parts = append(parts, "description changed")
	}
	if s := c.Schema; s != nil {
		var sp []string
		for _, p := range s.Added {
			sp = append(sp, "property "+p+" added")
		}
		for _, p := range s.Removed {
			sp = append(sp, "property "+p+" removed")
		}
		for _, p := range s.Changed {
			sp = append(sp, "property "+p+" changed")
		}
		for _, k := range s.Other {
			sp = append(sp, k+" changed")
		}
		parts = append(parts, "input schema: "+strings.Join(sp, ", "))
	}
	if len(c.Annotations) > 0 {
		parts = append(parts, "annotations: "+strings.Join(c.Annotations, ", ")+" changed")
	}
	if len(parts) == 0 {
		return "definition changed"
	}
	return strings.Join(parts, "; ")
}

// Compare returns how tools (a listing) differ from the baseline b, sorted
// by tool name: changed and added tools, then removed ones (named by their
// ToolKey). A nil b has nothing approved: every tool is added.
func Compare(b *Baseline, tools []mcpvalue.Tool) []Change { return CompareDigests(b, tools, nil) }

// CompareDigests is Compare with the tools' digests known: digests maps a
// tool's name to its ToolDigest (a Record's Digests), and a tool it lacks
// is digested. Only a tool whose digest differs from its approved one is
// looked at further.
func CompareDigests(b *Baseline, tools []mcpvalue.Tool, digests map[string]string) []Change {
	approved := map[string]ApprovedTool{}
	if b != nil {
		approved = b.Tools
	}
	var out []Change
	listed := make(map[string]bool, len(tools))
	for i := range tools {
		t := &tools[i]
		key := ToolKey(t.Name)
		listed[key] = true
		a, ok := approved[key]
		if !ok {
			out = append(out, Change{Tool: t.Name, Kind: Added, Current: t})
			continue
		}
		d, known := digests[t.Name]
		var err error
		if !known {
			d, err = ToolDigest(*t)
		}
		if err == nil && d == a.Digest {
			continue
		}
		c := Change{Tool: t.Name, Kind: Changed, Current: t}
		if parts, err := a.Parts(); err == nil {
			c.WasDescription = parts.Excerpt
			describe(&c, parts, *t)
		}
		out = append(out, c)
	}
	var removed []Change
	for key := range approved {
		if !listed[key] {
			removed = append(removed, Change{Tool: key, Kind: Removed})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	sort.Slice(removed, func(i, j int) bool { return removed[i].Tool < removed[j].Tool })
	return append(out, removed...)
}

// describe fills what changed between the approved parts a and the
// current definition t.
func describe(c *Change, a Parts, t mcpvalue.Tool) {
	p, err := partsOf(t)
	if err != nil {
		c.Description = true
		c.Schema = &SchemaChange{Other: []string{"schema"}}
		return
	}
	c.Description = a.Description != p.Description
	if a.Schema != p.Schema {
		sc := &SchemaChange{}
		if !a.Whole && !p.Whole {
			sc.Added, sc.Removed, sc.Changed = diffKeys(a.Properties, p.Properties)
			sc.Other = changedKeys(a.SchemaKeys, p.SchemaKeys)
		}
		if len(sc.Added)+len(sc.Removed)+len(sc.Changed)+len(sc.Other) == 0 {
			// Too large to say which part, or not an object on one side:
			// the schema as a whole changed.
			sc.Other = []string{"schema"}
		}
		c.Schema = sc
	}
	c.Annotations = changedKeys(a.Annotations, p.Annotations)
}

// diffKeys returns the keys only in b, only in a, and in both with
// other values, each sorted.
func diffKeys(a, b map[string]string) (added, removed, changed []string) {
	for k := range b {
		if _, ok := a[k]; !ok {
			added = append(added, k)
		}
	}
	for k, v := range a {
		w, ok := b[k]
		switch {
		case !ok:
			removed = append(removed, k)
		case v != w:
			changed = append(changed, k)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	sort.Strings(changed)
	return added, removed, changed
}

// objectOf decodes a canonical JSON object into its members, each
// canonical; anything else is an empty object.
func objectOf(raw []byte) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return map[string]json.RawMessage{}
	}
	for k, v := range m {
		if c, err := Canonical(v); err == nil {
			m[k] = c
		}
	}
	return m
}

// changedKeys lists the keys whose values differ between a and b, sorted.
func changedKeys(a, b map[string]string) []string {
	added, removed, changed := diffKeys(a, b)
	out := append(append(added, removed...), changed...)
	sort.Strings(out)
	return out
}

// String is the change in one line, "tool: summary".
func (c Change) String() string { return fmt.Sprintf("%s: %s", c.Tool, c.Summary()) }
