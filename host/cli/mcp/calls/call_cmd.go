package calls

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/urfave/cli/v3"
)

// CallOptions are what 'hermes mcp call NAME TOOL' needs: the run, its
// --json output, the server and tool, the arguments and how to print the
// result.
type CallOptions struct {
	Env  *cmdkit.Env
	JSON *cmdkit.JSONOutput
	// Name is the server, Tool the tool's name as the server gives it.
	Name, Tool string
	// Args are the k=v arguments: those of --arg, then the words after
	// the tool. ArgsJSON is --args-json.
	Args     []string
	ArgsJSON string
	// Rendered is --rendered: print what the model would receive.
	Rendered bool
}

// NewCmdCall is 'hermes mcp call NAME TOOL [k=v]...'. runF, when not nil,
// is called with the parsed options instead of callRun (the tests' seam).
func NewCmdCall(e *cmdkit.Env, runF func(context.Context, *CallOptions) error) *cli.Command {
	opts := &CallOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}}
	j := opts.JSON
	return &cli.Command{
		Name:      "call",
		Usage:     "call one tool of a server through the tool registry and print its result",
		ArgsUsage: "<name> <tool> [key=value]...",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "arg", Usage: "argument k=v (repeatable); converted by the tool's input schema", Destination: &opts.Args},
			&cli.StringFlag{Name: "args-json", Usage: "all arguments as one JSON object", Destination: &opts.ArgsJSON},
			j.Flag("print the raw MCP result; a failure to call prints the error object (docs/JSON.md)"),
			&cli.BoolFlag{Name: "rendered", Usage: "print the JSON string the model would receive", Destination: &opts.Rendered},
		},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() < 2 {
				return cmdkit.Usagef("usage: hermes mcp call <name> <tool> [--arg k=v]... [--args-json JSON] [--json | --rendered]")
			}
			opts.Name, opts.Tool = c.Args().Get(0), c.Args().Get(1)
			// Words after the tool written k=v are arguments, as --arg
			// takes them ('hermes mcp call ev echo message=hi').
			for _, w := range c.Args().Slice()[2:] {
				if k, _, ok := strings.Cut(w, "="); !ok || k == "" || strings.HasPrefix(w, "-") {
					return cmdkit.Usagef("%q after the tool is not an argument: write arguments as key=value or --arg key=value (--args-json for a JSON object); run 'hermes mcp tools %s %s' for its arguments", w, opts.Name, opts.Tool)
				}
				opts.Args = append(opts.Args, w)
			}
			if j.On && opts.Rendered {
				return cmdkit.Usagef("--json and --rendered cannot be combined; pick one")
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return callRun(ctx, opts)
		}),
	}
}

// callRun calls one tool through a registry of its one server, as the
// model would, and prints the result.
func callRun(ctx context.Context, opts *CallOptions) error {
	e, j := opts.Env, opts.JSON
	asJSON := j.On
	name, tool := opts.Name, opts.Tool
	_, srv, err := cmdkit.LoadServer(e, name)
	if err != nil {
		return err
	}
	if !srv.Enabled {
		return cmdkit.Failf("server '%s' is disabled; enable it with 'hermes mcp enable %s'", name, name)
	}
	// Single-server discovery: the same registry the agent uses, so
	// filters, names and rendering are the model's.
	m := cmdkit.NewManager(e, []*config.Server{srv})
	defer m.Detach() // the output is complete: do not wait for the servers to stop
	// A tool the server's approved record lists is called without
	// listing first (registry.Manager.ForCall says when).
	m.ForCall(name, tool)
	if err := m.Start(ctx); err != nil {
		return cmdkit.Failf("%s", cmdkit.ShownErr(err))
	}
	// What the registry knows about the tool says whether it can be
	// called and, if not, why, without calling anything.
	toolName := toolview.ToolName(name, tool)
	l := m.Lookup(toolName)
	if err := Unavailable(m, srv, tool, l); err != nil {
		return err
	}
	def := l.Def
	schema, _ := json.Marshal(def.Parameters)
	built, err := BuildArguments(&mcpvalue.Tool{Name: tool, InputSchema: schema}, opts.Args, opts.ArgsJSON)
	if err != nil {
		return cmdkit.Usagef("%s; run 'hermes mcp tools %s %s' for its arguments", err, name, tool)
	}
	args, err := json.Marshal(built)
	if err != nil {
		return cmdkit.Usagef("the arguments of %s cannot be sent: %v", tool, err)
	}
	if def.Utility != "" {
		// Resource and prompt utilities have only a rendered form.
		out, err := m.Call(ctx, toolName, args)
		WriteRendered(e, out.Text)
		if err != nil {
			return &cmdkit.ExitError{Code: cmdkit.ExitFail}
		}
		return nil
	}
	// Progress the server sends is a live line on a terminal.
	line := ui.NewProgressLine(e.Err)
	callCtx := registry.WithProgress(ctx, func(p registry.Progress) {
		line.Show(ui.ProgressText(tool, p.Progress, p.Total, p.Message))
	})
	res, err := m.CallTool(callCtx, name, def.OriginalName, args)
	line.Close()
	if err != nil {
		return cmdkit.Failf("calling '%s' on '%s' failed: %s", tool, name, cmdkit.ShownErr(err))
	}
	switch {
	case asJSON:
		j.Write(res)
	case opts.Rendered:
		WriteRendered(e, m.Render(name, &res))
	default:
		// A result is the server's text: shown with its lines,
		// any other control character escaped.
		fmt.Fprintln(e.Out, termsafe.EscapeText(m.RenderPerson(name, &res)))
	}
	if res.IsError {
		return &cmdkit.ExitError{Code: cmdkit.ExitFail}
	}
	return nil
}

// Unavailable is the error for a tool of srv that Lookup l says cannot be
// called (nil when it can): the server is down (and why), disabled, the
// tool filtered, or not offered (with what is).
func Unavailable(m *registry.Manager, srv *config.Server, tool string, l registry.Lookup) error {
	name := srv.Name
	switch l.Availability {
	case registry.Available:
		return nil
	case registry.ServerDown:
		msg := cmdkit.OrDefault(l.Reason, "no answer within connect_timeout")
		if srv.Auth == "" && cmdkit.ChallengeNamesOAuth(l.Code, l.Challenge) {
			msg += fmt.Sprintf("; this server uses OAuth: run 'hermes mcp login %s'", name)
		}
		err := cmdkit.Failf("cannot connect to '%s': %s", name, msg)
		if l.Code != "" {
			return cmdkit.WithCode(l.Code, err)
		}
		return err
	case registry.ServerDisabled:
		return cmdkit.Failf("server '%s' is disabled; enable it with 'hermes mcp enable %s'", name, name)
	case registry.Filtered:
		return cmdkit.Failf("%s; change it with 'hermes mcp configure %s'", l.Err().Error(), name)
	case registry.Withheld:
		return cmdkit.Failf("%s", l.Err().Error())
	}
	offered := OriginalNames(m, name)
	return cmdkit.WithCode(cmdkit.CodeNoSuchTool, cmdkit.Failf("server '%s' has no tool '%s'%s; it offers: %s", name, tool, cmdkit.DidYouMean("", tool, offered), strings.Join(offered, ", ")))
}

// WriteRendered prints the JSON string the model receives, with what a
// terminal would act on written as \u escapes (see writeJSON).
func WriteRendered(e *cmdkit.Env, rendered string) {
	_, _ = e.Out.Write(termsafe.JSON([]byte(rendered + "\n")))
}

// OriginalNames lists the MCP names of a server's registered tools.
func OriginalNames(m *registry.Manager, server string) []string {
	var out []string
	for _, d := range m.Tools() {
		if d.Server == server {
			out = append(out, d.OriginalName)
		}
	}
	return out
}

// BuildArguments merges --args-json (base) and --arg k=v pairs (which win),
// converting each k=v value by the type the tool's input schema gives k:
// number, integer, boolean, object or array (as JSON); anything else stays a
// string.
func BuildArguments(tool *mcpvalue.Tool, kvs []string, argsJSON string) (map[string]any, error) {
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
	var required []string
	if tool != nil {
		var raw struct {
			Properties map[string]any `json:"properties"`
			Required   []string       `json:"required"`
		}
		_ = json.Unmarshal(tool.InputSchema, &raw)
		props, required = raw.Properties, raw.Required
	}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--arg %q: expected key=value", kv)
		}
		val, err := ConvertArg(k, v, SchemaType(props[k]))
		if err != nil {
			return nil, err
		}
		args[k] = val
	}
	if err := CheckArguments(args, props, required); err != nil {
		return nil, err
	}
	return args, nil
}

// CheckArguments checks args against what the input schema says of them
// before anything is sent: every required argument is there, and a value
// with choices (enum) is one of them. The tool still checks the rest; this
// catches the mistakes a person makes on the command line with one line
// that says what to write.
func CheckArguments(args, props map[string]any, required []string) error {
	var missing []string
	for _, k := range required {
		if _, ok := args[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing required argument %s: pass --arg %s=VALUE", QuoteList(missing), missing[0])
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		p, _ := props[k].(map[string]any)
		choices, ok := p["enum"].([]any)
		if !ok || len(choices) == 0 {
			continue
		}
		if slices.ContainsFunc(choices, func(c any) bool { return reflect.DeepEqual(NormalJSON(c), NormalJSON(args[k])) }) {
			continue
		}
		shown := make([]string, len(choices))
		for i, c := range choices {
			b, _ := json.Marshal(c)
			shown[i] = string(b)
			if s, ok := c.(string); ok {
				shown[i] = s
			}
		}
		return fmt.Errorf("argument %s: want one of %s", k, strings.Join(shown, ", "))
	}
	return nil
}

// NormalJSON is v as encoding/json would decode it (an int64 becomes a
// float64), so that values built from --arg compare with the schema's.
func NormalJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// QuoteList is 'a', 'b' and 'c'.
func QuoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

func SchemaType(prop any) string {
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

func ConvertArg(k, v, typ string) (any, error) {
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
