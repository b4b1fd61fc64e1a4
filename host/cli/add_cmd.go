package cli

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/urfave/cli/v3"
)

// preset fills the transport of a well-known server.
type preset struct {
	command string
	args    []string
}

// presets are the names --preset accepts.
var presets = map[string]preset{
	"codex": {command: "codex", args: []string{"mcp-server"}},
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// addOptions is what 'hermes mcp add' was asked to do.
type addOptions struct {
	name           string
	command        string
	url            string
	cwd            string
	transport      string
	preset         string
	auth           string
	envs           []string
	headers        []string
	childArgs      []string
	hasChildArgs   bool
	connectTimeout int
	timeout        int
	tools          string
	yes            bool
	noProbe        bool
}

const addUsage = `hermes mcp add <name> --command CMD [--env K=V]... [--cwd DIR] [--args A B ...]
hermes mcp add <name> --url URL [--header 'K: V']... [--auth oauth|header]
hermes mcp add <name> --preset codex
common: [--tools a,b | --yes] [--no-probe] [--connect-timeout S] [--timeout S]`

const addDescription = `Everything after --args (or after --) is the server's argv, word for word,
so it must come last. Unless --no-probe is given the server is started first
and its tools listed; on a terminal you pick them from a checklist (all
checked), elsewhere every tool is enabled unless --tools names some.`

// addFlags are the flags of 'hermes mcp add'. o may be nil for a copy used
// only for help and completion.
func addFlags(o *addOptions) []cli.Flag {
	if o == nil {
		o = &addOptions{}
	}
	return []cli.Flag{
		&cli.StringFlag{Name: "command", Usage: "executable of a stdio server", Destination: &o.command},
		&cli.StringSliceFlag{Name: "env", Usage: "`KEY=VALUE` for a stdio server's environment (repeatable)", Destination: &o.envs},
		&cli.StringFlag{Name: "cwd", Usage: "working folder of a stdio server", Destination: &o.cwd},
		&cli.StringFlag{Name: "url", Usage: "endpoint of an HTTP server", Destination: &o.url},
		&cli.StringSliceFlag{Name: "header", Usage: "`'NAME: VALUE'` HTTP header (repeatable)", Destination: &o.headers},
		&cli.StringFlag{Name: "auth", Usage: "oauth (record auth: oauth) or header (ask for a bearer token)", Destination: &o.auth},
		&cli.StringFlag{Name: "transport", Usage: "transport for --url: http (default) or sse, or a transport plugin's name", Destination: &o.transport},
		&cli.StringFlag{Name: "preset", Usage: "fill the transport of a known server: codex", Destination: &o.preset},
		&cli.IntFlag{Name: "connect-timeout", Usage: "`SECONDS` to start and initialize the server", HideDefault: true, Destination: &o.connectTimeout},
		&cli.IntFlag{Name: "timeout", Usage: "`SECONDS` per tool call", HideDefault: true, Destination: &o.timeout},
		&cli.StringFlag{Name: "tools", Usage: "enable only these tools (`a,b`; names or globs), without asking", Destination: &o.tools},
		&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask: enable all tools, overwrite an existing entry", Destination: &o.yes},
		&cli.BoolFlag{Name: "no-probe", Usage: "save without connecting to the server", Destination: &o.noProbe},
		// Only for help: --args is cut off before parsing.
		&cli.BoolFlag{Name: "args", Usage: "the rest of the line is the server's argv (must be last)"},
	}
}

// addValueFlags are the flags of 'hermes mcp add' that take a value, so that
// a value spelled "--args" or "--" is not mistaken for the separator.
var addValueFlags = map[string]bool{
	"command": true, "env": true, "cwd": true, "url": true, "header": true, "auth": true,
	"transport": true, "preset": true, "connect-timeout": true, "timeout": true, "tools": true,
}

// SplitAddArgs splits the words after 'hermes mcp add' into the part for the
// flag parser and the stdio server's own argv: everything after the first
// "--args" (a "--" right after it is dropped), "--args=X" (X is the first
// word), or a bare "--". Values of flags that take one are skipped, so
// "--env --args" is not a separator. found reports whether a separator was
// seen.
func SplitAddArgs(words []string) (front, child []string, found bool) {
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			return slices.Clone(words[:i]), slices.Clone(words[i+1:]), true
		case w == "--args" || w == "-args":
			rest := words[i+1:]
			if len(rest) > 0 && rest[0] == "--" {
				rest = rest[1:]
			}
			return slices.Clone(words[:i]), slices.Clone(rest), true
		case strings.HasPrefix(w, "--args=") || strings.HasPrefix(w, "-args="):
			_, first, _ := strings.Cut(w, "=")
			return slices.Clone(words[:i]), append([]string{first}, words[i+1:]...), true
		}
		if strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && addValueFlags[strings.TrimLeft(w, "-")] {
			i++ // its value
		}
	}
	return slices.Clone(words), nil, false
}

// addCommand is 'hermes mcp add'. The child argv after --args must never
// reach the flag parser, so this command takes its words unparsed, splits
// them with SplitAddArgs and parses only the front part with an inner
// command that owns the real flags.
func addCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:            "add",
		Usage:           "add a server: connect, pick its tools, save it",
		UsageText:       addUsage,
		Description:     addDescription,
		SkipFlagParsing: true,
		Flags:           addFlags(nil), // for help and completion
		Action: func(ctx context.Context, c *cli.Command) error {
			front, child, found := SplitAddArgs(c.Args().Slice())
			for _, w := range front {
				if w == "-h" || w == "--help" || w == "-help" {
					return cli.ShowSubcommandHelp(c)
				}
			}
			o := &addOptions{childArgs: child, hasChildArgs: found}
			inner := &cli.Command{
				Name:                      "hermes mcp add",
				Flags:                     addFlags(o),
				DisableSliceFlagSeparator: true,
				Writer:                    e.out,
				ErrWriter:                 e.err,
				Reader:                    e.in,
				OnUsageError: func(ctx context.Context, c *cli.Command, err error, isSub bool) error {
					return usagef("%s; run 'hermes mcp add --help' for usage", oneLine(err.Error()))
				},
				Action: func(ctx context.Context, c *cli.Command) error {
					if c.Args().Len() != 1 {
						return usagef("usage: hermes mcp add <name> (--command CMD | --url URL | --preset NAME) [flags]; run 'hermes mcp add --help'")
					}
					o.name = c.Args().First()
					return e.runAdd(ctx, o)
				},
			}
			// The inner command is a root of its own: give it a context
			// that carries the cancellation but not the outer command.
			ictx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stop := context.AfterFunc(ctx, cancel)
			defer stop()
			err := inner.Run(ictx, append([]string{"hermes mcp add"}, front...))
			var ee *exitError
			if err != nil && !errors.As(err, &ee) {
				return usagef("%s; run 'hermes mcp add --help' for usage", oneLine(err.Error()))
			}
			return err
		},
	}
}

// addPlan is the validated request.
type addPlan struct {
	entry       *config.ServerEntry
	stdio       bool
	include     []string // from --tools
	interactive bool     // a person answers the questions
	secretKey   string   // .env key to write on save
	secret      string
}

// buildAddEntry validates the options and builds the entry to save (without
// tools and enabled). Errors are usage errors.
func buildAddEntry(o *addOptions) (*config.ServerEntry, error) {
	if !config.ValidName(o.name) {
		return nil, usagef("invalid server name '%s': use only letters, digits, '_' and '-'", o.name)
	}
	type kv struct{ k, v string }
	var envs []kv
	for _, item := range o.envs {
		k, v, ok := strings.Cut(item, "=")
		switch {
		case !ok:
			return nil, usagef("Invalid --env value '%s' (expected KEY=VALUE)", item)
		case k == "":
			return nil, usagef("Invalid --env value '%s' (missing variable name)", item)
		case !envNameRE.MatchString(k):
			return nil, usagef("Invalid --env variable name '%s'", k)
		}
		envs = append(envs, kv{k, v})
	}
	command, url := o.command, o.url
	args := o.childArgs
	hasArgs := o.hasChildArgs
	if o.preset != "" {
		p, ok := presets[o.preset]
		if !ok {
			names := make([]string, 0, len(presets))
			for n := range presets {
				names = append(names, n)
			}
			slices.Sort(names)
			return nil, usagef("Unknown MCP preset: %s (known: %s)", o.preset, strings.Join(names, ", "))
		}
		// Explicit flags win: the preset fills only what was not given.
		if command == "" && url == "" {
			command = p.command
			if !hasArgs {
				args, hasArgs = p.args, true
			}
		}
	}
	if url != "" && len(envs) > 0 {
		return nil, usagef("--env is only supported for stdio MCP servers (--command or stdio presets)")
	}
	switch {
	case url == "" && command == "":
		return nil, usagef("Must specify --url <endpoint>, --command <cmd>, or --preset <name>; e.g. hermes mcp add %s --url https://example.com/mcp, or hermes mcp add %s --command npx --args -y some-mcp-server", o.name, o.name)
	case url != "" && command != "":
		return nil, usagef("give either --url (HTTP server) or --command (stdio server), not both")
	case url != "" && hasArgs && len(args) > 0:
		return nil, usagef("--args is only for stdio MCP servers (--command); an HTTP server takes no argv")
	case url != "" && o.cwd != "":
		return nil, usagef("--cwd is only for stdio MCP servers (--command)")
	case command != "" && len(o.headers) > 0:
		return nil, usagef("--header is only for HTTP MCP servers (--url)")
	case command != "" && o.auth != "":
		return nil, usagef("--auth is only for HTTP MCP servers (--url)")
	}
	switch o.auth {
	case "", "oauth", "header":
	default:
		return nil, usagef("unknown --auth '%s': use oauth or header", o.auth)
	}
	if o.connectTimeout < 0 || o.timeout < 0 {
		return nil, usagef("--connect-timeout and --timeout are whole seconds above 0")
	}

	entry := config.NewServerEntry()
	if url != "" {
		entry.URL(url)
		if o.transport != "" {
			entry.Transport(o.transport)
		}
		for _, h := range o.headers {
			k, v, ok := strings.Cut(h, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || strings.ContainsAny(k, " \t") {
				return nil, usagef("Invalid --header value '%s' (expected 'Name: value')", h)
			}
			entry.Header(k, v)
		}
		if o.auth == "oauth" {
			entry.Auth("oauth")
		}
	} else {
		entry.Command(command)
		if hasArgs && len(args) > 0 {
			entry.Args(args...)
		}
		for _, e := range envs {
			entry.Env(e.k, e.v)
		}
		if o.cwd != "" {
			entry.Cwd(o.cwd)
		}
		if o.transport != "" && o.transport != "stdio" {
			return nil, usagef("--transport is only for --url servers")
		}
	}
	if o.connectTimeout > 0 {
		entry.ConnectTimeout(time.Duration(o.connectTimeout) * time.Second)
	}
	if o.timeout > 0 {
		entry.Timeout(time.Duration(o.timeout) * time.Second)
	}
	return entry, nil
}

// hasHeader reports whether the entry sets header key (case-insensitively).
func hasHeader(entry *config.ServerEntry, key string) bool {
	v, _ := entry.Fields.Get("headers")
	m, _ := v.(config.Map)
	for _, kv := range m {
		if strings.EqualFold(kv.Key, key) {
			return true
		}
	}
	return false
}

func (e *env) runAdd(ctx context.Context, o *addOptions) error {
	entry, err := buildAddEntry(o)
	if err != nil {
		return err
	}
	plan := &addPlan{entry: entry, interactive: e.p.Interactive() && !o.yes}
	_, isStdio := entry.Fields.Get("command")
	plan.stdio = isStdio
	if o.tools != "" {
		plan.include = splitList(o.tools)
		if len(plan.include) == 0 {
			return usagef("--tools needs at least one tool name, e.g. --tools read_file,list_dir")
		}
	}

	// An existing entry is replaced only when the person agrees.
	path, names, err := e.serverNames()
	if err != nil {
		return err
	}
	if slices.Contains(names, o.name) && !o.yes {
		if !plan.interactive {
			return failf("Server '%s' already exists in %s; pass --yes to overwrite it", o.name, path)
		}
		if !e.p.Confirm(fmt.Sprintf("Server '%s' already exists. Overwrite?", o.name), false) {
			return failf("Cancelled; '%s' was not changed", o.name)
		}
	}

	if !plan.stdio {
		if err := e.addAuth(o, plan); err != nil {
			return err
		}
	}

	if o.noProbe {
		if len(plan.include) > 0 {
			entry.Include(plan.include...)
			e.p.Info("--tools was not checked against the server (--no-probe)")
		}
		if err := e.saveAdd(o.name, plan); err != nil {
			return err
		}
		e.p.OK("Saved '%s' to %s (not connected: --no-probe)", o.name, path)
		e.p.Info("Check it with: hermes mcp test %s", o.name)
		e.p.Line("Start a new session to use these tools.")
		return nil
	}
	if o.auth == "oauth" {
		// OAuth sign-in is not part of this version: a probe could only
		// fail with 401, so the entry is saved as it is.
		if len(plan.include) > 0 {
			entry.Include(plan.include...)
		}
		if err := e.saveAdd(o.name, plan); err != nil {
			return err
		}
		e.p.OK("Saved '%s' to %s with auth: oauth", o.name, path)
		e.p.Info("Note: OAuth sign-in is not available in this version yet, so the server was not probed; 'hermes mcp login %s' will acquire tokens once it is.", o.name)
		e.p.Line("Start a new session to use these tools.")
		return nil
	}

	e.p.Line("Connecting to '%s'...", o.name)
	tools, err := e.addProbe(ctx, o, plan)
	if err != nil {
		msg := oneLine(err.Error())
		if !plan.interactive {
			return failf("Failed to connect to '%s': %s; nothing was saved: fix the problem and try again, or pass --no-probe to save without connecting", o.name, msg)
		}
		e.p.Fail("Failed to connect: %s", msg)
		if !e.p.Confirm("Save config anyway (you can test later)?", false) {
			return failf("'%s' was not saved", o.name)
		}
		if len(plan.include) > 0 {
			entry.Include(plan.include...)
		}
		entry.Enabled(false)
		if err := e.saveAdd(o.name, plan); err != nil {
			return err
		}
		e.p.OK("Saved '%s' to %s (disabled)", o.name, path)
		e.p.Line("Fix the issue, then: hermes mcp test %s", o.name)
		e.p.Info("and turn it on with: hermes mcp enable %s", o.name)
		return nil
	}

	if len(tools) == 0 {
		if len(plan.include) > 0 {
			return failf("'%s' reports no tools, so nothing matches --tools; nothing was saved", o.name)
		}
		e.p.Warn("Server connected but reported no tools.")
		if !e.p.Confirm("Save config anyway?", true) {
			return failf("'%s' was not saved", o.name)
		}
		if err := e.saveAdd(o.name, plan); err != nil {
			return err
		}
		e.p.OK("Saved '%s' to %s (0/0 tools enabled)", o.name, path)
		e.p.Line("Start a new session to use these tools.")
		return nil
	}

	e.p.OK("Connected! Found %d tool(s) from '%s':", len(tools), o.name)
	for _, t := range tools {
		e.p.Line("  %-40s %s", t.Name, ui.Truncate(oneLine(t.Description), 60, "..."))
	}
	all := make([]string, len(tools))
	for i, t := range tools {
		all[i] = t.Name
	}

	var chosen []string // nil: no filter
	switch {
	case len(plan.include) > 0:
		for _, p := range plan.include {
			if !slices.Contains(all, p) && !(toolview.IsGlob(p) && slices.ContainsFunc(all, func(n string) bool { return toolview.GlobMatch(p, n) })) {
				return failf("'%s' has no tool matching '%s'; available tools: %s; nothing was saved", o.name, p, strings.Join(all, ", "))
			}
		}
		if countAllowed(toolview.Filter{Include: plan.include}, all) < len(all) {
			chosen = plan.include
		}
	case plan.interactive:
		items := make([]ui.ChecklistItem, len(tools))
		for i, t := range tools {
			items[i] = ui.ChecklistItem{Key: t.Name, Description: oneLine(t.Description), Checked: true}
		}
		sel, err := e.p.Checklist(fmt.Sprintf("Tools to enable for '%s'", o.name), items)
		if errors.Is(err, ui.ErrCancelled) {
			return failf("Cancelled; '%s' was not saved", o.name)
		}
		if err != nil {
			return failf("tool checklist: %s", oneLine(err.Error()))
		}
		if len(sel) == 0 {
			return failf("No tools selected; '%s' was not saved", o.name)
		}
		if len(sel) < len(all) {
			chosen = sel
		}
	}
	// Non-interactive without --tools: every tool, like answering the
	// original's "Enable all N tools?" with its default.

	enabled := len(all)
	if chosen != nil {
		entry.Include(chosen...)
		enabled = countAllowed(toolview.Filter{Include: chosen}, all)
	}
	if err := e.saveAdd(o.name, plan); err != nil {
		return err
	}
	e.p.OK("Saved '%s' to %s (%d/%d tools enabled)", o.name, path, enabled, len(all))
	e.p.Line("Start a new session to use these tools.")
	return nil
}

// addAuth asks, on a terminal, whether an HTTP server needs a bearer token
// and wires it in through .env.
func (e *env) addAuth(o *addOptions, plan *addPlan) error {
	if o.auth == "oauth" || hasHeader(plan.entry, "Authorization") {
		return nil
	}
	if !plan.interactive && o.auth != "header" {
		return nil
	}
	key := APIKeyVar(o.name)
	dotenv, err := config.LoadDotEnv(e.home)
	if err != nil {
		return failf("%s", oneLine(err.Error()))
	}
	if o.auth != "header" && !e.p.Confirm("Does this server require authentication?", true) {
		return nil
	}
	if _, ok := dotenv[key]; ok {
		e.p.OK("%s: already configured", key)
		plan.entry.Header("Authorization", "Bearer ${"+key+"}")
		return nil
	}
	if !plan.interactive {
		return failf("--auth header needs a terminal to type the token; set %s in %s/.env, or pass --header 'Authorization: Bearer ${%s}'", key, e.home, key)
	}
	tok, err := e.p.Secret("API key / Bearer token")
	if err != nil {
		if errors.Is(err, ui.ErrCancelled) {
			return failf("Cancelled; '%s' was not saved", o.name)
		}
		return failf("reading the token: %s", oneLine(err.Error()))
	}
	if len(tok) >= 7 && strings.EqualFold(tok[:7], "bearer ") {
		tok = strings.TrimSpace(tok[7:])
	}
	if tok == "" {
		e.p.Warn("No token entered; continuing without authentication")
		return nil
	}
	plan.secretKey, plan.secret = key, tok
	plan.entry.Header("Authorization", "Bearer ${"+key+"}")
	return nil
}

// addProbe connects to the entry as it would be saved and lists its tools.
// A token typed for it reaches the entry's ${VAR} through the config layer
// as a pending .env value: until the entry is saved it exists nowhere else.
func (e *env) addProbe(ctx context.Context, o *addOptions, plan *addPlan) ([]mcp.Tool, error) {
	var pending map[string]string
	if plan.secret != "" {
		pending = map[string]string{plan.secretKey: plan.secret}
	}
	srv, err := e.candidateServer(o.name, plan.entry, pending)
	if err != nil {
		return nil, err
	}
	if srv.Err != nil {
		return nil, srv.Err
	}
	withProbeTimeout(srv)
	return e.probeTools(ctx, srv)
}

// saveAdd writes the token (if one was typed) and the entry.
func (e *env) saveAdd(name string, plan *addPlan) error {
	if plan.secret != "" {
		if err := config.SetDotEnv(e.home, plan.secretKey, plan.secret); err != nil {
			return failf("saving %s to %s/.env: %s", plan.secretKey, e.home, oneLine(err.Error()))
		}
	}
	err := config.Edit(e.home, func(d *config.Document) error { return d.SetServer(name, plan.entry) })
	if err != nil {
		return failf("saving '%s': %s", name, oneLine(err.Error()))
	}
	if plan.secret != "" {
		e.p.OK("API key saved to %s/.env as %s", e.home, plan.secretKey)
	}
	return nil
}

// countAllowed counts the tools f lets through.
func countAllowed(f toolview.Filter, tools []string) int {
	n := 0
	for _, t := range tools {
		if f.Allows(t) {
			n++
		}
	}
	return n
}
