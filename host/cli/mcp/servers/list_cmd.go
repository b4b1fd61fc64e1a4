package servers

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/cli/mcp/calls"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/urfave/cli/v3"
)

// ListOptions is what 'hermes mcp list' needs.
type ListOptions struct {
	Env  *cmdkit.Env
	JSON *cmdkit.JSONOutput
	// Check is --check: connect every enabled server.
	Check bool
}

// NewCmdList is 'hermes mcp list'. runF, when not nil, is called with the
// options in place of the work (the tests' seam).
func NewCmdList(e *cmdkit.Env, runF func(context.Context, *ListOptions) error) *cli.Command {
	opts := &ListOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}}
	j := opts.JSON
	return &cli.Command{
		Name:    "list",
		Aliases: []string{"ls"},
		Usage:   "show the configured servers (no connections are made; --check connects them)",
		Flags: []cli.Flag{
			j.Flag("print a JSON array of servers (see docs/JSON.md)"),
			&cli.BoolFlag{Name: "check", Usage: "connect every enabled server at once and show its state and tool count", Destination: &opts.Check},
		},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 0 {
				return cmdkit.Usagef("usage: hermes mcp list [--check] [--json]")
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return listRun(ctx, opts)
		}),
	}
}

// listRun prints the configured servers (connected first with --check).
func listRun(ctx context.Context, opts *ListOptions) error {
	e, j := opts.Env, opts.JSON
	cfg, err := e.F.Config()
	if err != nil {
		return cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	var live map[string]ListCheck
	if opts.Check && !cfg.SafeMode {
		live = CheckServers(e, ctx, cfg.Servers)
	}
	// What each server offered at its last connection: read, never
	// connected for (the list stays instant).
	store, now := e.F.Offered(), time.Now()
	caches := make(map[string]cmdkit.CacheState, len(cfg.Servers))
	for _, s := range cfg.Servers {
		caches[s.Name] = cmdkit.CacheOf(store, s)
	}
	if j.On {
		out := make([]cmdkit.JSONServer, 0, len(cfg.Servers))
		for _, s := range cfg.Servers {
			js := cmdkit.ServerJSON(s)
			js.Cache = caches[s.Name].Json()
			if l, ok := live[s.Name]; ok {
				js.State, js.Error = l.state, l.err
				if l.state == cmdkit.StateConnected {
					js.ToolsEnabled = &l.tools
				}
			}
			out = append(out, js)
		}
		j.Write(out)
		return nil
	}
	entries := make([]cmdkit.ListEntry, 0, len(cfg.Servers))
	for _, s := range cfg.Servers {
		entries = append(entries, cmdkit.DescribeServer(s))
	}
	if cfg.SafeMode {
		e.P.Warn("HERMES_SAFE_MODE is set: no MCP servers are loaded; unset it to see them")
		return nil
	}
	if len(entries) == 0 {
		e.P.Line("No MCP servers configured.")
		e.P.Line("")
		e.P.Line("Add one with:")
		e.P.Line("  hermes mcp add <name> --url <endpoint>")
		e.P.Line("  hermes mcp add <name> --command <cmd> --args <args...>")
		return nil
	}
	e.P.Header("MCP Servers:")
	// An Auth column once any server has an auth: method, an
	// Origin column once a project file declares one.
	withAuth, withOrigin := false, false
	for i, le := range entries {
		withAuth = withAuth || le.Auth != ""
		withOrigin = withOrigin || cfg.Servers[i].FromProject()
	}
	// The Last listed column only where it fits: on a narrow
	// terminal the status comes first (--json has the records).
	withCache := true
	if w := e.P.Width(); w > 0 && w < ListCacheMinWidth {
		withCache = false
	}
	rows := make([][]string, 0, len(entries))
	for i, le := range entries {
		row := []string{le.Name, ListTarget(cfg.Servers[i]), le.Tools}
		if withAuth {
			row = append(row, cmdkit.OrDefault(le.Auth, "none"))
		}
		row = append(row, ListStatus(le))
		if withOrigin {
			row = append(row, ListOrigin(cfg.Servers[i]))
		}
		if withCache {
			row = append(row, caches[le.Name].Text(now))
		}
		if live != nil {
			row = append(row, live[le.Name].text)
		}
		rows = append(rows, row)
	}
	headers := []string{"Name", "Transport", "Tools", "Status"}
	if withAuth {
		headers = []string{"Name", "Transport", "Tools", "Auth", "Status"}
	}
	if withOrigin {
		headers = append(headers, "Origin")
	}
	if withCache {
		headers = append(headers, "Last listed")
	}
	if live != nil {
		headers = append(headers, "Check")
	}
	e.P.TableFit(headers, rows, 1)
	return nil
}

// ListOrigin is the Origin column: config.yaml, or the project file (and
// whether it replaces the user's entry of the name).
func ListOrigin(s *config.Server) string {
	if !s.FromProject() {
		return "config.yaml"
	}
	if s.Origin.Overrides {
		return "project " + s.OriginText() + " (over config.yaml)"
	}
	return "project " + s.OriginText()
}

// ListCacheMinWidth is the narrowest terminal that gets list's Last listed
// column.
const ListCacheMinWidth = 100

// ListCheck is one server's state found by 'hermes mcp list --check'.
type ListCheck struct {
	state string            // connected, failed, needs_login, ... (registryState)
	err   *cmdkit.JSONError // why not connected
	tools int               // tools the model sees, when connected
	text  string            // the Check column
}

// CheckServers connects every enabled server at once, through the same
// registry as 'hermes tools' (each within its connect_timeout), and returns
// each one's state by name. Disabled and invalid servers are not started.
func CheckServers(e *cmdkit.Env, ctx context.Context, servers []*config.Server) map[string]ListCheck {
	var run []*config.Server
	for _, s := range servers {
		if s.Enabled && s.Err == nil && len(s.NeedsVars) == 0 {
			run = append(run, s)
		}
	}
	out := map[string]ListCheck{}
	if len(run) == 0 {
		return out
	}
	m := cmdkit.NewManager(e, run)
	defer m.Detach()
	_ = m.Start(ctx) // each server's outcome is in its status
	for _, st := range m.Status() {
		srv := FindServer(run, st.Name)
		state, jerr := cmdkit.RegistryState(st, srv)
		l := ListCheck{state: state, err: jerr, tools: st.Enabled}
		switch {
		case st.State == registry.StateConnected:
			l.text = fmt.Sprintf("✓ %d tools", st.Enabled)
		case jerr != nil && jerr.Message != "":
			l.text = "✗ " + calls.ClipRunes(cmdkit.OneLine(jerr.Message), 60)
		default:
			l.text = "✗ " + state
		}
		out[st.Name] = l
	}
	return out
}

// FindServer is the server of servers named name, or nil.
func FindServer(servers []*config.Server, name string) *config.Server {
	for _, s := range servers {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// ListTarget is the Transport column: the url, or the command's program
// (its base name) and its last argument as configured (${VAR}s
// unresolved), with "…" for the arguments between and a long path shown by
// its base name: "node … stdio", "npx … @modelcontextprotocol/server-memory".
// The table cuts it further to the terminal's width.
func ListTarget(s *config.Server) string {
	if u := cmdkit.ShownURL(s); u != "" {
		return u
	}
	prog := filepath.Base(cmdkit.ShownCommand(s))
	args := cmdkit.ShownArgs(s)
	switch len(args) {
	case 0:
		return prog
	case 1:
		return prog + " " + ShortArg(args[0])
	}
	return prog + " … " + ShortArg(args[len(args)-1])
}

// ShortArg is an argument for the Transport column: a long path (over
// maxShownPath characters) by its base name, anything else as it is.
func ShortArg(a string) string {
	if len(a) > MaxShownPath && strings.Contains(a, "/") && !strings.Contains(a, "://") && !strings.HasPrefix(a, "@") {
		return filepath.Base(a)
	}
	return a
}

// MaxShownPath is the longest path argument the Transport column shows
// whole.
const MaxShownPath = 30

// ListStatus is the Status column.
func ListStatus(le cmdkit.ListEntry) string {
	switch le.Status {
	case "disabled":
		return "✗ disabled"
	case "needs_vars":
		vars := make([]string, len(le.NeedsVars))
		for i, v := range le.NeedsVars {
			vars[i] = "${" + v + "}"
		}
		return "⚠ needs " + strings.Join(vars, ", ")
	case "invalid", "rejected", "missing_command":
		return "✗ " + le.Error
	case "not_approved":
		if le.Approval == config.ApprovalRejected {
			return "✗ rejected by you (hermes mcp approve " + le.Name + ")"
		}
		return "⏸ pending approval (hermes mcp approve " + le.Name + ")"
	}
	return "✓ enabled"
}
