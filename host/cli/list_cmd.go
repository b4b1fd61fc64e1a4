package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/screening"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/urfave/cli/v3"
)

// listEntry is one server as 'hermes mcp list' shows it (its --json is
// serverJSON's). Command, Args and URL are as written in config.yaml: a
// ${VAR} stays a reference, so a secret resolved from it is never printed.
type listEntry struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	Command   string   `json:"command,omitempty"`
	Args      []string `json:"args,omitempty"`
	URL       string   `json:"url,omitempty"`
	Enabled   bool     `json:"enabled"`
	// Tools is "all", "N selected" or "-N excluded".
	Tools   string   `json:"tools"`
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	Auth    string   `json:"auth,omitempty"`
	// Status is enabled, disabled, needs_vars, invalid, missing_command
	// (a stdio server whose executable is not there; Error says where it
	// was looked for) or rejected (the security check refuses the entry:
	// it is never started; Error says why).
	Status    string   `json:"status"`
	NeedsVars []string `json:"needs_vars,omitempty"`
	Error     string   `json:"error,omitempty"`
	// Origin is config.yaml or the project file (relative to the
	// project); Approval the person's decision on a project entry.
	Origin   string `json:"-"`
	Approval string `json:"-"`
}

func listCommand(e *env) *cli.Command {
	j := &jsonOutput{e: e}
	var check bool
	return &cli.Command{
		Name:    "list",
		Aliases: []string{"ls"},
		Usage:   "show the configured servers (no connections are made; --check connects them)",
		Flags: []cli.Flag{
			j.flag("print a JSON array of servers (see docs/JSON.md)"),
			&cli.BoolFlag{Name: "check", Usage: "connect every enabled server at once and show its state and tool count", Destination: &check},
		},
		Action: j.action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 0 {
				return usagef("usage: hermes mcp list [--check] [--json]")
			}
			cfg, err := e.f.Config()
			if err != nil {
				return withCode(codeConfig, failf("%s", oneLine(err.Error())))
			}
			var live map[string]listCheck
			if check && !cfg.SafeMode {
				live = checkServers(e, ctx, cfg.Servers)
			}
			// What each server offered at its last connection: read, never
			// connected for (the list stays instant).
			store, now := e.f.Offered(), time.Now()
			caches := make(map[string]cacheState, len(cfg.Servers))
			for _, s := range cfg.Servers {
				caches[s.Name] = cacheOf(store, s)
			}
			if j.on {
				out := make([]jsonServer, 0, len(cfg.Servers))
				for _, s := range cfg.Servers {
					js := serverJSON(s)
					js.Cache = caches[s.Name].json()
					if l, ok := live[s.Name]; ok {
						js.State, js.Error = l.state, l.err
						if l.state == stateConnected {
							js.ToolsEnabled = &l.tools
						}
					}
					out = append(out, js)
				}
				j.write(out)
				return nil
			}
			entries := make([]listEntry, 0, len(cfg.Servers))
			for _, s := range cfg.Servers {
				entries = append(entries, describeServer(s))
			}
			if cfg.SafeMode {
				e.p.Warn("HERMES_SAFE_MODE is set: no MCP servers are loaded; unset it to see them")
				return nil
			}
			if len(entries) == 0 {
				e.p.Line("No MCP servers configured.")
				e.p.Line("")
				e.p.Line("Add one with:")
				e.p.Line("  hermes mcp add <name> --url <endpoint>")
				e.p.Line("  hermes mcp add <name> --command <cmd> --args <args...>")
				return nil
			}
			e.p.Header("MCP Servers:")
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
			if w := e.p.Width(); w > 0 && w < listCacheMinWidth {
				withCache = false
			}
			rows := make([][]string, 0, len(entries))
			for i, le := range entries {
				row := []string{le.Name, listTarget(cfg.Servers[i]), le.Tools}
				if withAuth {
					row = append(row, orDefault(le.Auth, "none"))
				}
				row = append(row, listStatus(le))
				if withOrigin {
					row = append(row, listOrigin(cfg.Servers[i]))
				}
				if withCache {
					row = append(row, caches[le.Name].text(now))
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
			e.p.TableFit(headers, rows, 1)
			return nil
		}),
	}
}

// listOrigin is the Origin column: config.yaml, or the project file (and
// whether it replaces the user's entry of the name).
func listOrigin(s *config.Server) string {
	if !s.FromProject() {
		return "config.yaml"
	}
	if s.Origin.Overrides {
		return "project " + s.OriginText() + " (over config.yaml)"
	}
	return "project " + s.OriginText()
}

// listCacheMinWidth is the narrowest terminal that gets list's Last listed
// column.
const listCacheMinWidth = 100

// listCheck is one server's state found by 'hermes mcp list --check'.
type listCheck struct {
	state string     // connected, failed, needs_login, ... (registryState)
	err   *jsonError // why not connected
	tools int        // tools the model sees, when connected
	text  string     // the Check column
}

// checkServers connects every enabled server at once, through the same
// registry as 'hermes tools' (each within its connect_timeout), and returns
// each one's state by name. Disabled and invalid servers are not started.
func checkServers(e *env, ctx context.Context, servers []*config.Server) map[string]listCheck {
	var run []*config.Server
	for _, s := range servers {
		if s.Enabled && s.Err == nil && len(s.NeedsVars) == 0 {
			run = append(run, s)
		}
	}
	out := map[string]listCheck{}
	if len(run) == 0 {
		return out
	}
	m := newManager(e, run)
	defer m.Detach()
	_ = m.Start(ctx) // each server's outcome is in its status
	for _, st := range m.Status() {
		srv := findServer(run, st.Name)
		state, jerr := registryState(st, srv)
		l := listCheck{state: state, err: jerr, tools: st.Enabled}
		switch {
		case st.State == registry.StateConnected:
			l.text = fmt.Sprintf("✓ %d tools", st.Enabled)
		case jerr != nil && jerr.Message != "":
			l.text = "✗ " + clipRunes(oneLine(jerr.Message), 60)
		default:
			l.text = "✗ " + state
		}
		out[st.Name] = l
	}
	return out
}

// findServer is the server of servers named name, or nil.
func findServer(servers []*config.Server, name string) *config.Server {
	for _, s := range servers {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// describeServer summarises a configured server without connecting to it.
func describeServer(s *config.Server) listEntry {
	le := listEntry{
		Name:      s.Name,
		Transport: s.Transport,
		Command:   shownCommand(s),
		Args:      shownArgs(s),
		URL:       shownURL(s),
		Enabled:   s.Enabled,
		Include:   s.Tools.Include,
		Exclude:   s.Tools.Exclude,
		Auth:      s.Auth,
		NeedsVars: s.NeedsVars,
		Tools:     toolview.Filter{Include: s.Tools.Include, Exclude: s.Tools.Exclude}.Describe(),
		Origin:    s.OriginText(),
		Approval:  s.Origin.Approval,
	}
	if le.Transport != "" || s.URL != "" || s.Command != "" {
		le.Transport = s.Launch().Transport
	}
	switch {
	case !s.Enabled:
		le.Status = "disabled"
	case len(s.NeedsVars) > 0:
		le.Status = "needs_vars"
	case s.Err != nil:
		le.Status = "invalid"
	default:
		le.Status = "enabled"
		if why := missingCommand(s); why != "" && le.Transport == "stdio" {
			le.Status = "missing_command"
			le.Error = why
		}
	}
	if s.Err != nil {
		le.Error = oneLine(s.Err.Error())
	} else if err := screening.Admit(s); err != nil {
		// Rejected wins over disabled and needs_vars: such an entry is
		// never started, and must not be turned on as it is.
		le.Status = "rejected"
		le.Error = oneLine(err.Error())
	} else if err := s.AdmitOrigin(); err != nil && s.Enabled {
		le.Status = "not_approved"
		le.Error = oneLine(err.Error())
	}
	return le
}

// listTarget is the Transport column: the url, or the command's program
// (its base name) and its last argument as configured (${VAR}s
// unresolved), with "…" for the arguments between and a long path shown by
// its base name: "node … stdio", "npx … @modelcontextprotocol/server-memory".
// The table cuts it further to the terminal's width.
func listTarget(s *config.Server) string {
	if u := shownURL(s); u != "" {
		return u
	}
	prog := filepath.Base(shownCommand(s))
	args := shownArgs(s)
	switch len(args) {
	case 0:
		return prog
	case 1:
		return prog + " " + shortArg(args[0])
	}
	return prog + " … " + shortArg(args[len(args)-1])
}

// shortArg is an argument for the Transport column: a long path (over
// maxShownPath characters) by its base name, anything else as it is.
func shortArg(a string) string {
	if len(a) > maxShownPath && strings.Contains(a, "/") && !strings.Contains(a, "://") && !strings.HasPrefix(a, "@") {
		return filepath.Base(a)
	}
	return a
}

// maxShownPath is the longest path argument the Transport column shows
// whole.
const maxShownPath = 30

// listStatus is the Status column.
func listStatus(le listEntry) string {
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

// missingCommand says why a stdio server's executable cannot be started,
// without starting anything: a path that is not an executable file, or a
// name not on the PATH the server gets (its env: PATH, else hermes's). ""
// when it is there.
func missingCommand(s *config.Server) string {
	cmd := s.Command
	if cmd == "" {
		return ""
	}
	if strings.Contains(cmd, "/") {
		p := cmd
		if !filepath.IsAbs(p) && s.Cwd != "" {
			p = filepath.Join(s.Cwd, p)
		}
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return fmt.Sprintf("command %s not found (no executable file there)", cmd)
		}
		return ""
	}
	path := os.Getenv("PATH")
	if v, ok := s.Env["PATH"]; ok {
		path = v
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if fi, err := os.Stat(filepath.Join(dir, cmd)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return ""
		}
	}
	return fmt.Sprintf("command %s not found on PATH", cmd)
}
