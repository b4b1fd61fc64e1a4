package calls

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/urfave/cli/v3"
)

// SchemaDepth is how deep nested objects and arrays are shown; deeper
// levels are summed up by their type.
const SchemaDepth = 4

// SchemaTextMax bounds one description or value shown (runes).
const SchemaTextMax = 300

// SchemaToolJSON is one tool of 'hermes mcp tools --json'.
type SchemaToolJSON struct {
	Name        string         `json:"name"`
	ModelName   string         `json:"model_name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
}

// SchemaJSON is 'hermes mcp tools NAME --json'.
type SchemaJSON struct {
	Server string           `json:"server"`
	Tools  []SchemaToolJSON `json:"tools"`
}

// ToolsSchemaOptions are what 'hermes mcp tools NAME [TOOL]' needs: the
// run, its --json output, the server and, when given, one tool.
type ToolsSchemaOptions struct {
	Env  *cmdkit.Env
	JSON *cmdkit.JSONOutput
	// Name is the server; Tool one of its tools, "" for all of them.
	Name, Tool string
}

// NewCmdToolsSchema is 'hermes mcp tools NAME [TOOL]': the arguments of a
// server's tools as the model sees them (its tools filter applied), for a
// person to read, or their schemas with --json. runF, when not nil, is
// called with the parsed options instead of toolsSchemaRun (the tests'
// seam).
func NewCmdToolsSchema(e *cmdkit.Env, runF func(context.Context, *ToolsSchemaOptions) error) *cli.Command {
	opts := &ToolsSchemaOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}}
	j := opts.JSON
	return &cli.Command{
		Name:      "tools",
		Usage:     "show the arguments of a server's tools (names, types, required, defaults, choices)",
		ArgsUsage: "<name> [tool]",
		Flags: []cli.Flag{
			j.Flag("print the tools' input schemas (docs/JSON.md)"),
		},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() < 1 || c.Args().Len() > 2 {
				return cmdkit.Usagef("usage: hermes mcp tools <name> [tool] [--json]")
			}
			opts.Name, opts.Tool = c.Args().Get(0), c.Args().Get(1)
			if runF != nil {
				return runF(ctx, opts)
			}
			return toolsSchemaRun(ctx, opts)
		}),
	}
}

// toolsSchemaRun lists the server's tools through a registry of its one
// server and prints their arguments, or their schemas as JSON.
func toolsSchemaRun(ctx context.Context, opts *ToolsSchemaOptions) error {
	e, j := opts.Env, opts.JSON
	name, tool := opts.Name, opts.Tool
	_, srv, err := cmdkit.LoadServer(e, name)
	if err != nil {
		return err
	}
	if !srv.Enabled {
		return cmdkit.Failf("server '%s' is disabled; enable it with 'hermes mcp enable %s'", name, name)
	}
	m := cmdkit.NewManager(e, []*config.Server{srv})
	defer m.Detach()
	if err := m.Start(ctx); err != nil {
		return cmdkit.Failf("%s", cmdkit.ShownErr(err))
	}
	var defs []toolview.ToolDef
	if tool != "" {
		l := m.Lookup(toolview.ToolName(name, tool))
		if err := Unavailable(m, srv, tool, l); err != nil {
			return err
		}
		defs = append(defs, l.Def)
	} else {
		if _, listed := m.ServerTools(name); !listed {
			// Why the server is down, as for a call.
			if err := Unavailable(m, srv, "", m.Lookup(toolview.ToolName(name, "x"))); err != nil {
				return err
			}
		}
		for _, d := range m.Tools() {
			if d.Server == name && d.Utility == "" {
				defs = append(defs, d)
			}
		}
	}
	if j.On {
		out := SchemaJSON{Server: name, Tools: []SchemaToolJSON{}}
		for _, d := range defs {
			out.Tools = append(out.Tools, SchemaToolJSON{Name: d.OriginalName, ModelName: d.Name, Description: d.Description, InputSchema: d.Parameters})
		}
		j.Write(out)
		return nil
	}
	if len(defs) == 0 {
		e.P.Info("'%s' offers no tools the model sees (see its tools: filter with 'hermes mcp get %s').", name, name)
		return nil
	}
	for i, d := range defs {
		if i > 0 {
			fmt.Fprintln(e.Out)
		}
		WriteToolSchema(e.Out, d)
	}
	return nil
}

// WriteToolSchema writes one tool for a person: its name, the name the
// model sees, its description, then one line per argument. Everything
// from the server is escaped and bounded.
func WriteToolSchema(w io.Writer, d toolview.ToolDef) {
	fmt.Fprintf(w, "%s  (model name %s)\n", ShownName(d.OriginalName), ShownName(d.Name))
	if desc := strings.TrimSpace(d.Description); desc != "" {
		for _, line := range strings.Split(ClipRunes(desc, 4*SchemaTextMax), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				fmt.Fprintf(w, "  %s\n", termsafe.Escape(line))
			}
		}
	}
	lines := ArgumentLines(d.Parameters, "    ", 1)
	if len(lines) == 0 {
		fmt.Fprintln(w, "  No arguments.")
		return
	}
	fmt.Fprintln(w, "  Arguments:")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// ArgumentLines are the lines of an object schema's properties, required
// ones first, each "name  type  required  default: x  one of: a, b" and its
// description below it; nested objects are indented under their name.
func ArgumentLines(schema map[string]any, indent string, depth int) []string {
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		return nil
	}
	required := map[string]bool{}
	if rs, ok := schema["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.SliceStable(names, func(i, k int) bool {
		if required[names[i]] != required[names[k]] {
			return required[names[i]]
		}
		return names[i] < names[k]
	})
	var out []string
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		parts := []string{ShownName(n), TypeOf(p)}
		if required[n] {
			parts = append(parts, "required")
		}
		if v, ok := p["default"]; ok {
			parts = append(parts, "default: "+ValueText(v))
		}
		if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
			vals := make([]string, 0, len(enum))
			for _, v := range enum {
				vals = append(vals, ValueText(v))
			}
			parts = append(parts, "one of: "+ClipRunes(strings.Join(vals, ", "), SchemaTextMax))
		}
		for _, k := range []string{"minimum", "maximum", "minLength", "maxLength", "pattern", "format"} {
			if v, ok := p[k]; ok {
				parts = append(parts, k+": "+ValueText(v))
			}
		}
		out = append(out, indent+strings.Join(parts, "  "))
		if desc, ok := p["description"].(string); ok && strings.TrimSpace(desc) != "" {
			out = append(out, indent+"    "+termsafe.Escape(ClipRunes(strings.Join(strings.Fields(desc), " "), SchemaTextMax)))
		}
		if depth < SchemaDepth {
			sub := p
			if items, ok := p["items"].(map[string]any); ok {
				sub = items
			}
			out = append(out, ArgumentLines(sub, indent+"    ", depth+1)...)
		}
	}
	return out
}

// TypeOf names a property's type: "string", "integer or null", "array of
// string", "object"; "any" when the schema says nothing.
func TypeOf(p map[string]any) string {
	var types []string
	switch t := p["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				types = append(types, s)
			}
		}
	}
	if len(types) == 0 {
		for _, k := range []string{"anyOf", "oneOf"} {
			if alts, ok := p[k].([]any); ok {
				for _, a := range alts {
					if am, ok := a.(map[string]any); ok {
						if t := TypeOf(am); !slices.Contains(types, t) {
							types = append(types, t)
						}
					}
				}
			}
		}
	}
	if len(types) == 0 {
		return "any"
	}
	for i, t := range types {
		if t == "array" {
			if items, ok := p["items"].(map[string]any); ok {
				types[i] = "array of " + TypeOf(items)
			}
		}
		types[i] = ShownName(types[i])
	}
	return strings.Join(types, " or ")
}

// ValueText is a schema value (a default, an enum member) as JSON, bounded
// and escaped.
func ValueText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return termsafe.Escape(ClipRunes(string(b), SchemaTextMax/3))
}

// ShownName is a name from a server, escaped and bounded for one line.
func ShownName(s string) string { return termsafe.Escape(ClipRunes(s, 128)) }

// ClipRunes cuts s to n runes, marking the cut with "…".
func ClipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
