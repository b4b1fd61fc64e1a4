package add

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/importer"
	"github.com/urfave/cli/v3"
)

// AddOptions are what 'hermes mcp add' needs: the run, the name to add,
// its flags and the server's argv. add-json and import fill one too for
// the add flow they share (AddEntry).
type AddOptions struct {
	Env *cmdkit.Env
	// JSON is --json (print the saved server, progress on stderr) and
	// what it printed; nil when the options are not a command line's.
	JSON         *cmdkit.JSONOutput
	Name         string
	Command      string
	URL          string
	Cwd          string
	Transport    string
	Preset       string
	Auth         string
	ClientID     string
	ClientSecret string
	Scope        string
	NoBrowser    bool
	Device       bool
	Envs         []string
	Headers      []string
	ChildArgs    []string
	HasChildArgs bool
	// DashDash: the argv came after a bare "--"; without --command its
	// first word is the command.
	DashDash bool
	// ArgvFlags are words after --args spelled like hermes's own flags:
	// they are warned about.
	ArgvFlags []string
	// secrets are --header and --env values moved to .env by
	// buildAddEntry, with notes about values it kept as written.
	secrets        []importer.Secret
	secretNotes    []string
	ConnectTimeout time.Duration
	Timeout        time.Duration
	Tools          string
	Yes            bool
	NoProbe        bool
}

const AddUsage = `hermes mcp add <name> --command CMD [--env K=V]... [--cwd DIR] [--args A B ...]
hermes mcp add <name> [--env K=V]... [flags] -- CMD [A B ...]
hermes mcp add <name> --url URL [--header 'K: V']... [--auth oauth|header|exec|PLUGIN]
hermes mcp add <name> --url URL --auth oauth [--client-id ID] [--client-secret S] [--scope S] [--no-browser | --device]
hermes mcp add <name> --preset codex
common: [--tools a,b | --yes] [--no-probe] [--connect-timeout S] [--timeout S] [--json]`

const AddDescription = `Everything after --args (or after --) is the server's argv, word for word,
so it must come last. Words after --args spelled like hermes's own long
flags (--env, --no-probe, ...) are asked about on a terminal and refused
elsewhere (exit 2): write hermes's flags before --args, or use the -- form,
which passes everything after it to the server. Without --command, the first word after -- is the command. Unless --no-probe is given the server is started first
and its tools listed; on a terminal you pick them from a checklist (all
checked), elsewhere every tool is enabled unless --tools names some.

--auth oauth logs in first (a browser opens, or the URL is shown to paste
the redirect back; see 'hermes mcp login --help'), then probes with the new
tokens; if the login fails nothing is saved. --client-secret goes to
$HERMES_HOME/.env, referenced from the oauth: block; so do --header and
--env values that are secrets by their name or shape (the entry keeps
${MCP_<NAME>_<KEY>}). --auth exec records
auth: exec: add its exec: block (command, args) to config.yaml, then run
'hermes mcp login <name>'. --auth header asks for a bearer token. Any
other name is a third-party auth plugin (hermes-auth-<name>), logged in to
like OAuth.`

// AddFlags are the flags of 'hermes mcp add', bound to o's fields (--json
// to o.JSON, made when nil). o may be nil for a copy used only for help
// and completion.
func AddFlags(o *AddOptions) []cli.Flag {
	if o == nil {
		o = &AddOptions{}
	}
	if o.JSON == nil {
		o.JSON = &cmdkit.JSONOutput{E: o.Env}
	}
	return []cli.Flag{
		&cli.StringFlag{Name: "command", Usage: "executable of a stdio server", Destination: &o.Command},
		&cli.StringSliceFlag{Name: "env", Usage: "`KEY=VALUE` for a stdio server's environment (repeatable)", Destination: &o.Envs},
		&cli.StringFlag{Name: "cwd", Usage: "working folder of a stdio server", Destination: &o.Cwd},
		&cli.StringFlag{Name: "url", Usage: "endpoint of an HTTP server", Destination: &o.URL},
		&cli.StringSliceFlag{Name: "header", Usage: "`'NAME: VALUE'` HTTP header (repeatable)", Destination: &o.Headers},
		&cli.StringFlag{Name: "auth", Usage: "oauth (log in now), header (ask for a bearer token), exec (a command prints the token) or an auth plugin's name", Destination: &o.Auth},
		&cli.StringFlag{Name: "client-id", Usage: "with --auth oauth: a client `ID` registered at the authorization server", Destination: &o.ClientID},
		&cli.StringFlag{Name: "client-secret", Usage: "with --auth oauth: that client's `SECRET` (saved to .env)", Destination: &o.ClientSecret},
		&cli.StringFlag{Name: "scope", Usage: "with --auth oauth: the `SCOPE` to ask for (default: what the server names)", Destination: &o.Scope},
		&cli.BoolFlag{Name: "no-browser", Usage: "when add logs in: show the login URL instead of opening a browser", Destination: &o.NoBrowser},
		&cli.BoolFlag{Name: "device", Usage: "when add logs in: use a code on another device (OAuth device authorization)", Destination: &o.Device},
		&cli.StringFlag{Name: "transport", Usage: "transport for --url: http (default) or sse, or a transport plugin's name", Destination: &o.Transport},
		&cli.StringFlag{Name: "preset", Usage: "fill the transport of a known server: codex", Destination: &o.Preset},
		&cmdkit.TimeFlag{Name: "connect-timeout", Usage: "how long the server may take to start and initialize (`SECONDS` or a duration: 60, 2m)", HideDefault: true, Destination: &o.ConnectTimeout},
		&cmdkit.TimeFlag{Name: "timeout", Usage: "how long one tool call may take (`SECONDS` or a duration: 300, 5m)", HideDefault: true, Destination: &o.Timeout},
		&cli.StringFlag{Name: "tools", Usage: "enable only these tools (`a,b`; names or globs), without asking", Destination: &o.Tools},
		&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask: enable all tools, overwrite an existing entry", Destination: &o.Yes},
		&cli.BoolFlag{Name: "no-probe", Usage: "save without connecting to the server", Destination: &o.NoProbe},
		o.JSON.Flag("print the saved server (progress goes to stderr; see docs/JSON.md)"),
		// Only for help: --args is cut off before parsing.
		&cli.BoolFlag{Name: "args", Usage: "the rest of the line is the server's argv (must be last)"},
	}
}

// AddValueFlags are the flags of 'hermes mcp add' that take a value, so that
// a value spelled "--args" or "--" is not mistaken for the separator.
var AddValueFlags = map[string]bool{
	"command": true, "env": true, "cwd": true, "url": true, "header": true, "auth": true,
	"transport": true, "preset": true, "connect-timeout": true, "timeout": true, "tools": true,
	"client-id": true, "client-secret": true, "scope": true,
}

// Separators of a stdio server's argv on 'hermes mcp add', as SplitAddArgs
// reports them.
const (
	// SepNone: no separator; the server has no argv from this line.
	SepNone = ""
	// SepDashDash: a bare "--", as other MCP clients write it
	// ('hermes mcp add NAME -- CMD ARGS...'): without --command, the first
	// word after it is the command.
	SepDashDash = "--"
	// SepArgs: "--args" or "--args=X": the words after it are the
	// arguments of --command.
	SepArgs = "--args"
)

// SplitAddArgs splits the words after 'hermes mcp add' into the part for the
// flag parser and the stdio server's own argv: everything after the first
// "--args" (a "--" right after it is dropped), "--args=X" (X is the first
// word), or a bare "--". Values of flags that take one are skipped, so
// "--env --args" is not a separator. sep is the separator seen (SepArgs,
// SepDashDash or SepNone).
func SplitAddArgs(words []string) (front, child []string, sep string) {
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			return slices.Clone(words[:i]), slices.Clone(words[i+1:]), SepDashDash
		case w == "--args" || w == "-args":
			rest := words[i+1:]
			if len(rest) > 0 && rest[0] == "--" {
				rest = rest[1:]
			}
			return slices.Clone(words[:i]), slices.Clone(rest), SepArgs
		case strings.HasPrefix(w, "--args=") || strings.HasPrefix(w, "-args="):
			_, first, _ := strings.Cut(w, "=")
			return slices.Clone(words[:i]), append([]string{first}, words[i+1:]...), SepArgs
		}
		if strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && AddValueFlags[strings.TrimLeft(w, "-")] {
			i++ // its value
		}
	}
	return slices.Clone(words), nil, SepNone
}

// HermesFlagsIn returns the words of a server's argv that are spelled like
// one of the long flags of 'hermes mcp add' ("--tools", "--no-probe=true"),
// in order, each once: after --args they are the server's, which is rarely
// what was meant. Short ones are not counted: "-y" after --args is npx's
// (npx -y pkg) far more often than hermes's.
func HermesFlagsIn(argv []string) []string {
	known := map[string]bool{"h": true, "help": true}
	for _, f := range AddFlags(nil) {
		for _, n := range f.Names() {
			known[n] = n != "args"
		}
	}
	var out []string
	for _, w := range argv {
		if !strings.HasPrefix(w, "--") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		if known[name] && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// ConfirmArgvFlags decides on hermes's own flags written after --args
// (o.argvFlags), which would be saved as the server's argv: a flag such as
// --env API_KEY=... there would be kept as an argument, and --no-probe
// would not stop the probe. On a terminal the person is asked whether they
// are meant for the server (default no); without one it is a usage error
// (exit 2) naming the flags and the two ways to write what was meant. The
// "--" form passes everything after it to the server without asking.
func ConfirmArgvFlags(e *cmdkit.Env, o *AddOptions) error {
	if len(o.ArgvFlags) == 0 {
		return nil
	}
	flags := strings.Join(o.ArgvFlags, " ")
	fix := fmt.Sprintf("put hermes's flags before --args, or write 'hermes mcp add %s [flags] -- CMD ARGS...' to give them to the server", o.Name)
	if !e.P.Interactive() {
		return cmdkit.Usagef("%s after --args would be saved as the server's own arguments, not read by hermes; %s", flags, fix)
	}
	e.P.Warn("%s after --args would be saved as the server's own arguments, not read by hermes", flags)
	if e.P.Confirm("Are they the server's arguments?", false) {
		return nil
	}
	return cmdkit.Usagef("nothing was saved: %s", fix)
}

// NewCmdAdd builds 'hermes mcp add'. The child argv after --args must
// never reach the flag parser, so this command takes its words unparsed,
// splits them with SplitAddArgs and parses only the front part with an
// inner command that owns the real flags. Its action fills an AddOptions
// and hands it to runF when runF is not nil (a test's look at what was
// parsed), else to addRun.
func NewCmdAdd(e *cmdkit.Env, runF func(context.Context, *AddOptions) error) *cli.Command {
	return &cli.Command{
		Name:            "add",
		Usage:           "add a server: connect, pick its tools, save it",
		UsageText:       AddUsage,
		Description:     AddDescription,
		SkipFlagParsing: true,
		Flags:           AddFlags(nil), // for help and completion
		Action: func(ctx context.Context, c *cli.Command) error {
			front, child, sep := SplitAddArgs(c.Args().Slice())
			for _, w := range front {
				if w == "-h" || w == "--help" || w == "-help" {
					return cli.ShowSubcommandHelp(c)
				}
			}
			o := &AddOptions{
				Env: e, JSON: &cmdkit.JSONOutput{E: e},
				ChildArgs: child, HasChildArgs: sep != SepNone, DashDash: sep == SepDashDash,
			}
			if sep == SepArgs {
				o.ArgvFlags = HermesFlagsIn(child)
			}
			inner := &cli.Command{
				Name:                      "hermes mcp add",
				Flags:                     AddFlags(o),
				DisableSliceFlagSeparator: true,
				Writer:                    e.Out,
				ErrWriter:                 e.Err,
				Reader:                    e.In,
				OnUsageError: func(ctx context.Context, c *cli.Command, err error, isSub bool) error {
					return cmdkit.UsageError(c, err)
				},
				// The name to add is a name, also when it is "h" or
				// "help" (see argumentsFirst).
				HideHelpCommand: true,
				Action: o.JSON.Action(func(ctx context.Context, c *cli.Command) error {
					if c.Args().Len() != 1 {
						return cmdkit.Usagef("usage: hermes mcp add <name> (--command CMD | --url URL | --preset NAME) [flags]; run 'hermes mcp add --help'")
					}
					o.Name = c.Args().First()
					if runF != nil {
						return runF(ctx, o)
					}
					return addRun(ctx, o)
				}),
			}
			// The inner command is a root of its own: give it a context
			// that carries the cancellation but not the outer command.
			ictx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stop := context.AfterFunc(ctx, cancel)
			defer stop()
			err := inner.Run(ictx, append([]string{"hermes mcp add"}, front...))
			var ee *cmdkit.ExitError
			if err != nil && !errors.As(err, &ee) {
				return cmdkit.UsageError(inner, err)
			}
			return err
		},
	}
}

// addRun adds the server o describes: it asks about hermes's flags after
// --args, builds the entry, runs the add flow, and with --json prints the
// saved server.
func addRun(ctx context.Context, o *AddOptions) error {
	e := o.Env
	if o.JSON.On {
		cmdkit.ProgressToStderr(e)
	}
	if err := ConfirmArgvFlags(e, o); err != nil {
		return err
	}
	entry, err := BuildAddEntry(o)
	if err != nil {
		return err
	}
	plan := &AddPlan{Entry: entry, interactive: e.P.Interactive() && !o.Yes, secretFrom: map[string]string{}}
	for _, n := range o.secretNotes {
		e.P.Info("note: %s", n)
	}
	for _, sec := range o.secrets {
		plan.Secrets = append(plan.Secrets, DotEnvValue{sec.Var, sec.Value})
		plan.secretFrom[sec.Var] = sec.From
	}
	if o.ClientSecret != "" {
		plan.Secrets = append(plan.Secrets, DotEnvValue{ClientSecretVar(o.Name), o.ClientSecret})
	}
	if err := AddEntry(e, ctx, o, plan); err != nil || !o.JSON.On {
		return err
	}
	return cmdkit.PrintServer(e, o.JSON, o.Name)
}
