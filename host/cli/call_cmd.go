package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/urfave/cli/v3"
)

func callCommand(e *env) *cli.Command {
	var (
		asJSON   bool
		kvs      []string
		argsJSON string
	)
	return &cli.Command{
		Name:      "call",
		Usage:     "call one tool of a server and print its result",
		ArgsUsage: "<name> <tool>",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "arg", Usage: "argument k=v (repeatable); converted by the tool's input schema", Destination: &kvs},
			&cli.StringFlag{Name: "args-json", Usage: "all arguments as one JSON object", Destination: &argsJSON},
			&cli.BoolFlag{Name: "json", Usage: "print the raw MCP result", Destination: &asJSON},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 2 {
				return usagef("usage: hermes mcp call <name> <tool> [--arg k=v]... [--args-json JSON]")
			}
			name, tool := c.Args().Get(0), c.Args().Get(1)
			_, srv, err := e.loadServer(name)
			if err != nil {
				return err
			}
			s, err := e.connect(ctx, srv)
			if err != nil {
				return failf("cannot connect to '%s': %s", name, oneLine(err.Error()))
			}
			defer s.Close()
			res, err := s.Client.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				return failf("tools/list on '%s' failed: %s", name, oneLine(err.Error()))
			}
			var def *mcp.Tool
			var names []string
			for i := range res.Tools {
				names = append(names, res.Tools[i].Name)
				if res.Tools[i].Name == tool {
					def = &res.Tools[i]
				}
			}
			if def == nil {
				return failf("server '%s' has no tool '%s'; it has: %s", name, tool, strings.Join(names, ", "))
			}
			args, err := BuildArguments(def, kvs, argsJSON)
			if err != nil {
				return usagef("%s", err)
			}
			callCtx, cancel := context.WithTimeout(ctx, srv.Timeout)
			defer cancel()
			out, err := s.Client.CallTool(callCtx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
			if err != nil {
				if callCtx.Err() == context.DeadlineExceeded {
					return failf("MCP call timed out after %s", fmtSeconds(srv.Timeout))
				}
				return failf("calling '%s' on '%s' failed: %s", tool, name, oneLine(err.Error()))
			}
			if asJSON {
				writeJSON(e, out)
			} else {
				fmt.Fprintln(e.out, renderPlain(out))
			}
			if out.IsError {
				return &exitError{code: ExitFail}
			}
			return nil
		},
	}
}

func fmtSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// renderPlain turns a tool result into text for a person.
func renderPlain(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		switch v := c.(type) {
		case mcp.TextContent:
			parts = append(parts, v.Text)
		case mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d base64 bytes]", v.MIMEType, len(v.Data)))
		case mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d base64 bytes]", v.MIMEType, len(v.Data)))
		case mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link %s]", v.URI))
		case mcp.EmbeddedResource:
			if t, ok := v.Resource.(mcp.TextResourceContents); ok {
				parts = append(parts, t.Text)
			} else {
				parts = append(parts, "[embedded resource]")
			}
		}
	}
	if r.StructuredContent != nil && len(parts) == 0 {
		b, _ := json.MarshalIndent(r.StructuredContent, "", "  ")
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "\n")
}

// BuildArguments merges --args-json (base) and --arg k=v pairs (which win),
// converting each k=v value by the type the tool's input schema gives k:
// number, integer, boolean, object or array (as JSON); anything else stays a
// string.
func BuildArguments(tool *mcp.Tool, kvs []string, argsJSON string) (map[string]any, error) {
	args := map[string]any{}
	if strings.TrimSpace(argsJSON) != "" {
		if err := json.Unmarshal([]byte(argsJSON), &args); err != nil {
			return nil, fmt.Errorf("--args-json is not a JSON object: %v", err)
		}
		if args == nil {
			args = map[string]any{}
		}
	}
	props := map[string]any{}
	if tool != nil {
		props = tool.InputSchema.Properties
		if props == nil && len(tool.RawInputSchema) > 0 {
			var raw struct {
				Properties map[string]any `json:"properties"`
			}
			_ = json.Unmarshal(tool.RawInputSchema, &raw)
			props = raw.Properties
		}
	}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--arg %q: expected key=value", kv)
		}
		val, err := convertArg(k, v, schemaType(props[k]))
		if err != nil {
			return nil, err
		}
		args[k] = val
	}
	return args, nil
}

func schemaType(prop any) string {
	m, ok := prop.(map[string]any)
	if !ok {
		return ""
	}
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

func convertArg(k, v, typ string) (any, error) {
	switch typ {
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("--arg %s=%s: want an integer", k, v)
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return nil, fmt.Errorf("--arg %s=%s: want a number", k, v)
		}
		return f, nil
	case "boolean":
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("--arg %s=%s: want true or false", k, v)
		}
		return b, nil
	case "object", "array":
		var x any
		if err := json.Unmarshal([]byte(v), &x); err != nil {
			return nil, fmt.Errorf("--arg %s: want JSON (%s): %v", k, typ, err)
		}
		return x, nil
	}
	return v, nil
}
