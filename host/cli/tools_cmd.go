package cli

import (
	"context"
	"fmt"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/urfave/cli/v3"
)

// builtinToolsets are the host's own toolsets. This build has none yet;
// the registry still reserves their tool names when there are some.
var builtinToolsets = []toolsetInfo{}

type toolsetInfo struct {
	Name  string   `json:"name"`
	Tools []string `json:"tools"`
}

// toolsReport is what 'hermes tools --json' prints.
type toolsReport struct {
	Builtin   []toolsetInfo      `json:"builtin"`
	SafeMode  bool               `json:"safe_mode,omitempty"`
	Servers   []toolsServerEntry `json:"servers"`
	Available int                `json:"available_tools"`
}

type toolsServerEntry struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	State     string   `json:"state"`
	Toolset   string   `json:"toolset,omitempty"`
	Tools     []string `json:"tools"`
	Enabled   int      `json:"enabled"`
	Total     int      `json:"total"`
	Error     string   `json:"error,omitempty"`
	// NeedsLogin: only 'hermes mcp login <name>' can connect it (the
	// server's auth plugin needs a login, or a server without auth:
	// answered with an OAuth challenge).
	NeedsLogin bool `json:"needs_login,omitempty"`
	// Hint says what to do about Error, when there is something.
	Hint string `json:"hint,omitempty"`
}

// newManager builds a registry for servers with the host's session deps,
// for a command that lists or calls once and exits (Snapshot: no
// notification streams).
func (e *env) newManager(servers []*config.Server) *registry.Manager {
	var builtins []string
	for _, ts := range builtinToolsets {
		builtins = append(builtins, ts.Tools...)
	}
	return registry.New(registry.Options{
		Servers:  servers,
		Builtins: builtins,
		Deps:     e.sessionDeps(e.creds()),
		Snapshot: true,
	})
}

func toolsCommand(e *env) *cli.Command {
	var asJSON bool
	return &cli.Command{
		Name:  "tools",
		Usage: "connect to every enabled MCP server and show the tools a model would see, beside the built-in toolsets",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print a JSON report", Destination: &asJSON}},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 0 {
				return usagef("usage: hermes tools [--json]")
			}
			cfg, err := config.Load(e.home)
			if err != nil {
				return failf("%s", oneLine(err.Error()))
			}
			rep := toolsReport{Builtin: builtinToolsets, SafeMode: cfg.SafeMode, Servers: []toolsServerEntry{}}
			if !asJSON && len(cfg.Servers) > 0 && !cfg.SafeMode {
				e.p.Info("Connecting to %d MCP server(s)...", len(cfg.Servers))
			}
			m := e.newManager(cfg.Servers)
			defer m.Detach() // the output is complete: do not wait for the servers to stop
			if err := m.Start(ctx); err != nil {
				return failf("%s", shownErr(err))
			}
			noAuth := map[string]bool{}
			for _, srv := range cfg.Servers {
				noAuth[srv.Name] = srv.Auth == ""
			}
			for _, st := range m.Status() {
				ent := toolsServerEntry{Name: st.Name, Transport: st.Transport, State: string(st.State), Toolset: st.Toolset,
					Tools: st.Registered, Enabled: st.Enabled, Total: st.Total, Error: st.Error}
				switch {
				case st.Code == sdk.CodeLoginNeeded:
					ent.NeedsLogin = true
				case noAuth[st.Name] && challengeNamesOAuth(st.Code, st.Challenge):
					ent.NeedsLogin = true
					ent.Hint = fmt.Sprintf("This server uses OAuth; run: hermes mcp login %s", st.Name)
				}
				if ent.Tools == nil {
					ent.Tools = []string{}
				}
				rep.Servers = append(rep.Servers, ent)
			}
			rep.Available = len(m.Tools())
			if asJSON {
				writeJSON(e, rep)
				return nil
			}
			printTools(e, rep, cfg.Path)
			return nil
		},
	}
}

func printTools(e *env, rep toolsReport, path string) {
	e.p.Header("Built-in toolsets")
	if len(rep.Builtin) == 0 {
		e.p.Line("  none (this build has no built-in tools yet)")
	}
	for _, ts := range rep.Builtin {
		e.p.Line("  %s (%d tools)", ts.Name, len(ts.Tools))
	}
	e.p.Line("")
	e.p.Header("MCP servers")
	switch {
	case rep.SafeMode:
		e.p.Warn("HERMES_SAFE_MODE is set: no MCP servers are loaded")
		return
	case len(rep.Servers) == 0:
		e.p.Line("  none configured in %s; add one with 'hermes mcp add'", path)
		return
	}
	for _, s := range rep.Servers {
		switch registry.State(s.State) {
		case registry.StateDisabled:
			e.p.Line("- %s (%s): disabled; enable it with 'hermes mcp enable %s'", s.Name, s.Transport, s.Name)
			continue
		case registry.StateConnected:
			e.p.OK("%s (%s) %s: %d/%d tools enabled", s.Name, s.Transport, s.Toolset, s.Enabled, s.Total)
		default:
			reason := s.Error
			if reason == "" {
				reason = "no answer yet"
			}
			e.p.Fail("%s (%s): %s: %s", s.Name, s.Transport, s.State, reason)
			if s.Hint != "" {
				e.p.Info("    %s", s.Hint)
			}
			continue
		}
		// One tool a line: names are what people look for, and a long
		// comma-joined line wraps mid-word on a narrow terminal.
		for _, t := range s.Tools {
			e.p.Line("      %s", t)
		}
	}
	e.p.Line("")
	e.p.Line("%s available to the model", plural(rep.Available, "tool"))
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
