package cli

import (
	"context"
	"strings"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/screening"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/urfave/cli/v3"
)

// listEntry is one server in 'hermes mcp list --json'. Command, Args and
// URL are as written in config.yaml: a ${VAR} stays a reference, so a
// secret resolved from it is never printed.
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
	// Status is enabled, disabled, needs_vars, invalid or rejected (the
	// security check refuses the entry: it is never started; Error says
	// why).
	Status    string   `json:"status"`
	NeedsVars []string `json:"needs_vars,omitempty"`
	Error     string   `json:"error,omitempty"`
}

func listCommand(e *env) *cli.Command {
	var asJSON bool
	return &cli.Command{
		Name:    "list",
		Aliases: []string{"ls"},
		Usage:   "show the configured servers (no connections are made)",
		Flags:   []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print a JSON array", Destination: &asJSON}},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 0 {
				return usagef("usage: hermes mcp list [--json]")
			}
			cfg, err := config.Load(e.home)
			if err != nil {
				return failf("%s", oneLine(err.Error()))
			}
			entries := make([]listEntry, 0, len(cfg.Servers))
			for _, s := range cfg.Servers {
				entries = append(entries, describeServer(s))
			}
			if asJSON {
				writeJSON(e, entries)
				return nil
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
			// An Auth column once any server has an auth: method.
			withAuth := false
			for _, le := range entries {
				withAuth = withAuth || le.Auth != ""
			}
			rows := make([][]string, 0, len(entries))
			for i, le := range entries {
				row := []string{le.Name, listTarget(cfg.Servers[i]), le.Tools}
				if withAuth {
					row = append(row, orDefault(le.Auth, "none"))
				}
				rows = append(rows, append(row, listStatus(le)))
			}
			headers := []string{"Name", "Transport", "Tools", "Status"}
			if withAuth {
				headers = []string{"Name", "Transport", "Tools", "Auth", "Status"}
			}
			e.p.Table(headers, rows)
			return nil
		},
	}
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
	}
	if le.Transport == "" {
		switch {
		case s.URL != "":
			le.Transport = "http"
		case s.Command != "":
			le.Transport = "stdio"
		}
	} else if session.PluginName(s) == "stdio" {
		le.Transport = "stdio"
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
	}
	if s.Err != nil {
		le.Error = oneLine(s.Err.Error())
	} else if err := screening.Admit(s); err != nil {
		// Rejected wins over disabled and needs_vars: such an entry is
		// never started, and must not be turned on as it is.
		le.Status = "rejected"
		le.Error = oneLine(err.Error())
	}
	return le
}

// listTarget is the Transport column: the url, or the command line, as
// configured (${VAR}s unresolved), cut to 25 characters and "..." when
// longer than 28.
func listTarget(s *config.Server) string {
	t := shownURL(s)
	if t == "" {
		t = shownCommandLine(s)
	}
	if r := []rune(t); len(r) > 28 {
		t = string(r[:25]) + "..."
	}
	return t
}

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
	case "invalid", "rejected":
		return "✗ " + le.Error
	}
	return "✓ enabled"
}
