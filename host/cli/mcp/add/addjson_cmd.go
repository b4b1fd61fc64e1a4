package add

import (
	"context"
	"io"
	"strings"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/importer"
	"github.com/urfave/cli/v3"
)

const AddJSONDescription = `JSON is one server in the shape other MCP clients write in their config
files, e.g. '{"type":"stdio","command":"npx","args":["-y","pkg"],"env":{"K":"v"}}'
or '{"type":"http","url":"https://example.com/mcp","headers":{"Authorization":"Bearer ..."}}'
(Gemini CLI's httpUrl is read too). Without JSON, or with "-", it is read
from stdin. Values of env variables and headers that look secret go to
$HERMES_HOME/.env as MCP_<NAME>_<KEY>, referred to as ${MCP_<NAME>_<KEY>}.
The server is then added like 'hermes mcp add' adds one: screened, probed
unless --no-probe, its tools picked on a terminal or with --tools.
For a whole config file use 'hermes mcp import --from FILE'.`

// AddJSONOptions are what 'hermes mcp add-json' needs: the run, the name
// to add, the server's JSON and the flags.
type AddJSONOptions struct {
	Env *cmdkit.Env
	// JSON is --json (print the saved server, progress on stderr) and
	// what it printed.
	JSON *cmdkit.JSONOutput
	Name string
	// Server is the server's JSON as given after the name; "-" (also
	// when none is given) reads it from stdin.
	Server  string
	Tools   string
	Yes     bool
	NoProbe bool
}

// NewCmdAddJSON builds 'hermes mcp add-json'. Its action fills an
// AddJSONOptions from the command line and hands it to runF when runF is
// not nil (a test's look at what was parsed), else to addJSONRun.
func NewCmdAddJSON(e *cmdkit.Env, runF func(context.Context, *AddJSONOptions) error) *cli.Command {
	o := &AddJSONOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}}
	return &cli.Command{
		Name:        "add-json",
		Usage:       "add a server given as JSON in the shape other MCP clients use",
		UsageText:   "hermes mcp add-json <name> [JSON | -] [--tools a,b | --yes] [--no-probe] [--json]",
		Description: AddJSONDescription,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tools", Usage: "enable only these tools (`a,b`; names or globs), without asking", Destination: &o.Tools},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask: enable all tools, overwrite an existing entry", Destination: &o.Yes},
			&cli.BoolFlag{Name: "no-probe", Usage: "save without connecting to the server", Destination: &o.NoProbe},
			o.JSON.Flag("print the saved server (progress goes to stderr; see docs/JSON.md)"),
		},
		Action: o.JSON.Action(func(ctx context.Context, c *cli.Command) error {
			args := c.Args().Slice()
			if len(args) < 1 || len(args) > 2 {
				return cmdkit.Usagef("usage: hermes mcp add-json <name> [JSON | -]; run 'hermes mcp add-json --help'")
			}
			o.Name, o.Server = args[0], "-"
			if len(args) == 2 {
				o.Server = args[1]
			}
			if !config.ValidName(o.Name) {
				return cmdkit.Usagef("invalid server name '%s': use only letters, digits, '_' and '-'", o.Name)
			}
			if runF != nil {
				return runF(ctx, o)
			}
			return addJSONRun(ctx, o)
		}),
	}
}

// addJSONRun reads the server's JSON (from the line or stdin), turns it
// into an entry and adds it as 'hermes mcp add' would.
func addJSONRun(ctx context.Context, o *AddJSONOptions) error {
	e := o.Env
	if o.JSON.On {
		// stdout is the JSON; notes and progress go to stderr.
		cmdkit.ProgressToStderr(e)
	}
	var data []byte
	if o.Server != "-" {
		data = []byte(o.Server)
	} else {
		b, err := io.ReadAll(io.LimitReader(e.In, config.MaxConfigBytes+1))
		if err != nil {
			return cmdkit.Failf("reading the JSON from stdin: %s", cmdkit.OneLine(err.Error()))
		}
		if len(b) > config.MaxConfigBytes {
			return cmdkit.Failf("the JSON on stdin is over %d MiB; give one server's settings", config.MaxConfigBytes>>20)
		}
		data = b
	}
	if strings.TrimSpace(string(data)) == "" {
		return cmdkit.Usagef("no JSON given: pass it after the name or on stdin, e.g. hermes mcp add-json %s '{\"command\":\"npx\",\"args\":[\"-y\",\"pkg\"]}'", o.Name)
	}
	home, _ := e.F.UserHome()
	cwd, _ := e.F.WorkDir()
	srv, err := importer.FromJSON(o.Name, data, home, cwd)
	if err != nil {
		return cmdkit.Usagef("invalid server JSON for '%s': %s; give one object such as '{\"command\":\"npx\",\"args\":[\"-y\",\"pkg\"]}' (see 'hermes mcp add-json --help')", o.Name, cmdkit.OneLine(err.Error()))
	}
	if srv.Err != nil {
		return cmdkit.Usagef("cannot add '%s': %s; give a command (stdio) or a url (HTTP), see 'hermes mcp add-json --help'", o.Name, cmdkit.OneLine(srv.Err.Error()))
	}
	for _, n := range srv.Notes {
		e.P.Info("note: %s", n)
	}
	if o.Tools != "" && len(cmdkit.SplitList(o.Tools)) == 0 {
		return cmdkit.Usagef("--tools needs at least one tool name, e.g. --tools read_file,list_dir")
	}
	ao := &AddOptions{Env: e, Name: o.Name, Tools: o.Tools, Yes: o.Yes, NoProbe: o.NoProbe}
	plan := &AddPlan{
		Entry: srv.Entry, interactive: e.P.Interactive() && !o.Yes,
		Secrets: ImportSecrets(srv), secretFrom: map[string]string{},
	}
	for _, sec := range srv.Secrets {
		plan.secretFrom[sec.Var] = sec.From
	}
	if a, _ := srv.Entry.Fields.Get("auth"); a == "oauth" {
		ao.Auth = "oauth" // an oauth block: log in, like add --auth oauth
	}
	if err := AddEntry(e, ctx, ao, plan); err != nil || !o.JSON.On {
		return err
	}
	return cmdkit.PrintServer(e, o.JSON, o.Name)
}
